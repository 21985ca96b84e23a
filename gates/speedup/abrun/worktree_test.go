package abrun

import "testing"

func TestShortRev(t *testing.T) {
	for in, want := range map[string]string{
		"e1a3195c0ffee0123456789abcdef0123456789a": "e1a3195c0ffe",
		"e1a3195": "e1a3195",
		"":        "",
	} {
		if got := ShortRev(in); got != want {
			t.Errorf("ShortRev(%q) = %q, want %q", in, got, want)
		}
	}
}
