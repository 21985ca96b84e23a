package sanitizer

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGenTable(t *testing.T) {
	if os.Getenv("GEN") == "" {
		t.Skip()
	}
	for _, dir := range []string{"sanitizer-h200-cuda13.0", "probe/h200-cuda13.0"} {
		files, _ := filepath.Glob(capturePath(dir) + "/*")
		for _, f := range files {
			name := dir + "/" + filepath.Base(f)
			b, _ := os.ReadFile(f)
			var lines []string
			var err error
			if strings.HasSuffix(f, ".xml") {
				var r Run
				r, err = ParseXMLWith(bytes.NewReader(b), filepath.Base(f), ParseOptions{Tool: toolFromName(name)})
				if err == nil {
					lines = render(r)
				}
			} else {
				var runs []Run
				runs, err = ParseTextWith(bytes.NewReader(b), filepath.Base(f), ParseOptions{Tool: toolFromName(name)})
				lines = renderAll(runs)
			}
			fmt.Printf("\t{file: %q", name)
			if err != nil {
				fmt.Printf(", err: %q},\n", err.Error())
				continue
			}
			fmt.Printf(", want: []string{\n")
			for _, l := range lines {
				fmt.Printf("\t\t%q,\n", l)
			}
			fmt.Printf("\t}},\n")
		}
	}
}
