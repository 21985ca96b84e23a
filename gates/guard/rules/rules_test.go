package rules

import (
	"os"
	"regexp"
	"testing"
)

// TestRuleTable checks the table against the list of rule IDs in the gate's doc, and that
// DefaultRules hands out a copy.
func TestRuleTable(t *testing.T) {
	doc, err := os.ReadFile("../doc.go") // the gate's doc lists every rule ID
	if err != nil {
		t.Fatal(err)
	}
	docIDs := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^//\t([a-z0-9]+(?:-[a-z0-9]+)+)  +\S`).FindAllSubmatch(doc, -1) {
		docIDs[string(m[1])] = true
	}
	tableIDs := map[string]bool{}
	for _, r := range DefaultRules() {
		tableIDs[r.ID] = true
		if !docIDs[r.ID] {
			t.Errorf("rule %s is not in gates/guard/doc.go", r.ID)
		}
		if r.What == "" || r.Why == "" {
			t.Errorf("rule %s has no what or why", r.ID)
		}
		if !r.IsCommandRule() && !r.IsWriteRule() && !r.IsCallRule() {
			t.Errorf("rule %s matches nothing", r.ID)
		}
	}
	for id := range docIDs {
		if !tableIDs[id] {
			t.Errorf("gates/guard/doc.go rule %s has no pattern in DefaultRules", id)
		}
	}
	a := DefaultRules()
	a[0].Command[0] = "changed"
	a[0].ValueFlags[0] = "changed"
	a[0].ID = "changed"
	if b := DefaultRules(); b[0].ID == "changed" || b[0].Command[0] == "changed" || b[0].ValueFlags[0] == "changed" {
		t.Error("DefaultRules shares its table")
	}
}
