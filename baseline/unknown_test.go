package baseline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/fakegithub"
)

// A file written by a newer kernel-gate, with fields this one does not know at the top and
// inside entries (at any depth), keeps them through an update and a prune: an older
// kernel-gate updating a newer one's store loses nothing of the entries it keeps.
const futureFile = `{"schema":"kernel-gate/baseline/v1","key":{"gpu":"NVIDIA H200","arch":"sm_90"},` +
	`"future_field":{"added_in":"v9","list":[1,2,{"deep":true}]},"entries":[
{"commit":"c0","time":"2026-03-04T05:06:07Z","verdict":"pass","fingerprint":{"gpu":"NVIDIA H200","arch":"sm_90","future_fp":"x"},"future_entry":{"power_w":[350.5,351]},"kernels":[{"name":"_Z1kv","arch":"sm_90","sass":{"instructions":0},"future_kernel":7}]},
{"commit":"c1","time":"2026-03-04T05:06:08Z","verdict":"pass","fingerprint":{"gpu":"NVIDIA H200","arch":"sm_90"},"future_entry":"second"}
]}
`

// futureFields are the unknown fields of futureFile, as encode compacts them.
var futureFields = []string{
	`"future_field":{"added_in":"v9","list":[1,2,{"deep":true}]}`,
	`"future_fp":"x"`, `"future_entry":{"power_w":[350.5,351]}`, `"future_kernel":7`, `"future_entry":"second"`,
}

func TestUpdateKeepsFieldsItDoesNotKnow(t *testing.T) {
	ctx := context.Background()
	check := func(t *testing.T, raw []byte, want []string, gone []string) {
		t.Helper()
		for _, w := range want {
			if !bytes.Contains(raw, []byte(w)) {
				t.Errorf("lost %s:\n%s", w, raw)
			}
		}
		for _, g := range gone {
			if bytes.Contains(raw, []byte(g)) {
				t.Errorf("still has %s:\n%s", g, raw)
			}
		}
		if _, err := decodeKeyFile(raw, "f", nil); err != nil {
			t.Errorf("the file does not read back: %v\n%s", err, raw)
		}
	}
	stores := map[string]func(t *testing.T) (Store, func() []byte){
		"dir": func(t *testing.T) (Store, func() []byte) {
			dir := t.TempDir()
			name := filepath.Join(dir, h200().File())
			os.WriteFile(name, []byte(futureFile), 0o644)
			return NewDir(dir, 0), func() []byte { raw, _ := os.ReadFile(name); return raw }
		},
		"git": func(t *testing.T) (Store, func() []byte) {
			srv := fakegithub.New()
			t.Cleanup(srv.Close)
			g := gitStore(t, srv, nil)
			err := g.commit(ctx, "seeding", func(context.Context, snapshot) (map[string][]byte, string, error) {
				return map[string][]byte{h200().File(): []byte(futureFile)}, "a newer kernel-gate's file\n", nil
			})
			if err != nil {
				t.Fatal(err)
			}
			return g, func() []byte {
				head, _ := srv.Ref(repo, "heads/"+DefaultBranch)
				files, _ := srv.Files(repo, head)
				return files[h200().File()]
			}
		},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			s, read := open(t)
			if err := s.Update(ctx, entry("NVIDIA H200", "sm_90", "c2", 2)); err != nil {
				t.Fatal(err)
			}
			raw := read()
			check(t, raw, append(futureFields, `"commit":"c2"`), nil)
			// The entries read back are what this kernel-gate knows of them.
			es, err := s.History(ctx, h200(), 0)
			if err != nil || len(es) != 3 || es[2].Kernels[0].Name != "_Z1kv" {
				t.Fatalf("history: %v %v", commits(es), err)
			}
			// A prune drops the oldest entry and keeps the rest as they were.
			if err := s.Prune(ctx, 2); err != nil {
				t.Fatal(err)
			}
			check(t, read(), []string{futureFields[0], `"future_entry":"second"`, `"commit":"c2"`}, []string{`"commit":"c0"`, `"future_kernel"`})
		})
	}
}

// The fields this kernel-gate knows are matched as encoding/json matches them, case aside
// ("Entries" is the history, not an unknown field kept beside it), and one given twice
// under two spellings is refused rather than chosen between by a map's order.
func TestKnownFieldsMatchedOnce(t *testing.T) {
	k := h200()
	const head = `{"schema":"kernel-gate/baseline/v1","key":{"gpu":"NVIDIA H200","arch":"sm_90"},`
	const e = `{"commit":"c0","time":"2026-03-04T05:06:07Z","verdict":"pass","fingerprint":{"gpu":"NVIDIA H200","arch":"sm_90"}}`
	f, err := decodeKeyFile([]byte(head+`"Entries":[`+e+`]}`), "f", &k)
	if err != nil || len(f.Entries) != 1 || len(f.extra) != 0 {
		t.Fatalf("Entries: %+v %v", f, err)
	}
	if _, err := decodeKeyFile([]byte(head+`"entries":[],"Entries":[`+e+`]}`), "f", &k); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("entries and Entries: %v", err)
	}
}
