package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A config of two YAML documents is refused (exit 2) naming the file and the second
// document's line, by every command that reads one: its first document was used and the
// limit after "---" silently dropped.
func TestConfigOfTwoDocumentsIsRefused(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "k.yml")
	os.WriteFile(cfg, []byte("cuda: \">=12\"\n---\nptxas:\n  max_registers: 64\n"), 0o644)
	for _, args := range [][]string{
		{"ptxas", "--config", cfg, "testdata/replay/clean/head/attention/compile/2.log"},
		{"sass", "--config", cfg, "testdata/replay/clean/head/attention/sass.txt.gz"},
	} {
		code, _, stderr := kg(t, "", args...)
		if code != exitUsage || !strings.Contains(stderr, cfg+":2: a second YAML document starts here") {
			t.Errorf("%s: exit %d, stderr %q", args[0], code, stderr)
		}
	}
}
