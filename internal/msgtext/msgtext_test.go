package msgtext

import (
	"fmt"
	"testing"
)

func TestFirstLine(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"one line", "one line"},
		{"fatal: not a git repository\nhint: run git init", "fatal: not a git repository"},
		{"\nafter a blank first line", ""},
		{"ends with a break\n", "ends with a break"},
		{"carriage return\r\nnext", "carriage return\r"},
	} {
		if got := FirstLine(tt.in); got != tt.want {
			t.Errorf("FirstLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func ExampleFirstLine() {
	fmt.Println(FirstLine("exit status 128\nfatal: bad revision 'main...HEAD'"))
	// Output: exit status 128
}

func TestClip(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 80, "short"},
		{"exactly", 7, "exactly"},
		{"a longer line", 8, "a longer…"},
		{"", 0, ""},
	} {
		if got := Clip(tt.in, tt.n); got != tt.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}
