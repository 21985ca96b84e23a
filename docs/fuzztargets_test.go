package docs

import (
	"os"
	"regexp"
	"testing"
)

// make fuzz (and so CI) runs the Makefile's FUZZ_TARGETS: a fuzz test left out of it would
// only ever run its seed corpus.
func TestMakefileFuzzesEveryFuzzTest(t *testing.T) {
	mk, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile(`\./([\w/]+|\.)?:(Fuzz\w+)`).FindAllStringSubmatch(string(mk), -1) {
		listed[m[1]+":"+m[2]] = true
	}
	fuzz := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(`)
	found := 0
	for _, f := range goFiles(t, true) {
		for _, m := range fuzz.FindAllStringSubmatch(string(f.src), -1) {
			found++
			if !listed[f.pkg+":"+m[1]] {
				t.Errorf("%s: %s is not in the Makefile's FUZZ_TARGETS (./%s:%s)", f.path, m[1], f.pkg, m[1])
			}
		}
	}
	if found < 30 {
		t.Fatalf("found only %d fuzz tests", found)
	}
}
