package guard

import (
	"strings"
	"testing"
)

// Found when the guard first ran over this repository: a function that shifts its first
// argument away before forwarding "$*", and a Makefile variable continued over lines.
func TestShiftAndContinuedMakeVariables(t *testing.T) {
	tests := []struct {
		path, src string
		rules     []string // rule IDs found, in order
	}{
		{"a.sh", "#!/bin/bash\nrun() { local f=$1; shift; bash -c \"$*\" >\"$f\"; }\nrun out.txt \"for f in a b; do echo $f; done\"\n", nil},
		{"b.sh", "#!/bin/bash\nrun() { shift; bash -c \"$*\"; }\nrun x \"sudo reboot\"\n", []string{"host-reboot"}},
		{"c.sh", "#!/bin/bash\nrun() { shift 2; \"$@\"; }\nrun a b sudo poweroff\n", []string{"host-shutdown"}},
		{"d.sh", "#!/bin/bash\nrun() { shift; \"$@\"; }\nrun sudo poweroff\n", []string{"host-shutdown"}}, // "$@" is then "poweroff"
		{"Makefile", "CMDS = \\\n\techo a \\\n\techo b\n\nall:\n\t@for c in $(CMDS); do \\\n\t\techo $$c; \\\n\tdone\n", nil},
	}
	for _, tt := range tests {
		fs, ws := ScanFile(tt.path, []byte(tt.src), Config{})
		var got []string
		for _, f := range fs {
			got = append(got, f.Rule)
		}
		if strings.Join(got, ",") != strings.Join(tt.rules, ",") {
			t.Errorf("%s: rules %q, want %q", tt.path, got, tt.rules)
		}
		if len(ws) > 0 {
			t.Errorf("%s: warnings %+v", tt.path, ws)
		}
	}
}
