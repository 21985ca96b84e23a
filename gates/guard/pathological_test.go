package guard

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestPathological feeds inputs built to blow up a naive analysis (values that double at
// every level, functions calling each other, scripts nested in scripts) and requires each
// to finish quickly.
func TestPathological(t *testing.T) {
	var shellVars, pyVars, makeVars, funcs, nestedQ strings.Builder
	shellVars.WriteString("v0=reboot\n")
	pyVars.WriteString("v0 = 'reboot'\n")
	makeVars.WriteString("V0 = reboot\n")
	for i := 1; i < 40; i++ {
		fmt.Fprintf(&shellVars, "v%d=\"$v%d $v%d $v%d\"\nv%d=x\n", i, i-1, i-1, i-1, i)
		fmt.Fprintf(&pyVars, "v%d = [v%d, v%d, v%d]\n", i, i-1, i-1, i-1)
		fmt.Fprintf(&makeVars, "V%d = $(V%d)$(V%d)$(V%d)\n", i, i-1, i-1, i-1)
		fmt.Fprintf(&funcs, "f%d() { f%d \"$@\" \"$@\"; f%d \"$@\"; }\n", i, i-1, i-1)
	}
	shellVars.WriteString("$v39\n")
	pyVars.WriteString("import subprocess\nsubprocess.run(v39)\n")
	makeVars.WriteString("all:\n\t$(V39)\n")
	funcs.WriteString("f0() { sudo \"$@\"; }\nf39 reboot\n")
	nestedQ.WriteString(strings.Repeat("bash -c \"eval ", 30) + "reboot" + strings.Repeat("\"", 30) + "\n")
	tests := []struct{ name, path, src string }{
		{"shell variables", "x.sh", shellVars.String()},
		{"python names", "x.py", pyVars.String()},
		{"make variables", "Makefile", makeVars.String()},
		{"functions", "x.sh", funcs.String()},
		{"nested scripts", "x.sh", nestedQ.String()},
		{"many alternatives", "x.sh", strings.Repeat("A=sudo\nA=doas\nA=env\n", 4) + strings.Repeat("$A ", 40) + "reboot\n"},
		{"long line", "x.sh", "echo " + strings.Repeat("a ", 200000) + "\n"},
		{"many heredocs", "x.sh", strings.Repeat("bash <<E\nsudo reboot\nE\n", 2000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			fs, _ := ScanFile(tt.path, []byte(tt.src), Config{})
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v (%d findings)", d, len(fs))
			}
		})
	}
}
