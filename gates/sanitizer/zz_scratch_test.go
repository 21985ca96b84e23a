package sanitizer

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestZZScratch(t *testing.T) {
	files, _ := filepath.Glob(capturePath("sanitizer-kernels-h200") + "/*")
	for _, f := range files {
		b := filepath.Base(f)
		if !(strings.HasPrefix(b, "cs_") || strings.HasPrefix(b, "xml")) {
			continue
		}
		name := "sanitizer-kernels-h200/" + b
		runs, err := parseCapture(t, name, toolFromName(name), readCapture(t, name))
		fmt.Println("=== " + name)
		if err != nil {
			fmt.Println("ERR", err)
		}
		for _, l := range renderAll(runs) {
			fmt.Println(l)
		}
		for _, r := range runs {
			if err := consistent(r); err != nil {
				fmt.Println("INCONSISTENT", err)
			}
		}
	}
	_ = os.Stdout
}
