package firstline

import (
	"fmt"
	"testing"
)

func TestOf(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"one line", "one line"},
		{"fatal: not a git repository\nhint: run git init", "fatal: not a git repository"},
		{"\nafter a blank first line", ""},
		{"ends with a break\n", "ends with a break"},
		{"carriage return\r\nnext", "carriage return\r"},
	} {
		if got := Of(tt.in); got != tt.want {
			t.Errorf("Of(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func ExampleOf() {
	fmt.Println(Of("exit status 128\nfatal: bad revision 'main...HEAD'"))
	// Output: exit status 128
}
