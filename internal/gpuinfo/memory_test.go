package gpuinfo

import (
	"strings"
	"testing"
)

func TestParseFreeMiB(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    int
		wantErr string
	}{
		{"143156\n", 143156, ""},
		{"\n22517\n80000\n", 22517, ""},
		{"[N/A]\n", 0, "not the free memory"},
		{"-5\n", 0, "not the free memory"},
		{"", 0, "no GPU"},
	} {
		got, err := ParseFreeMiB(strings.NewReader(tc.in))
		if got != tc.want || (err == nil) != (tc.wantErr == "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("ParseFreeMiB(%q) = %d, %v; want %d, %q", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}
