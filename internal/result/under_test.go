package result

import "testing"

func TestUnder(t *testing.T) {
	for _, tt := range []struct {
		root, file, want string
		ok               bool
	}{
		{"/work/repo", "/work/repo/kernels/flash_fwd.cu", "kernels/flash_fwd.cu", true},
		{"/work/repo/", "/work/repo/a/../kernels/k.cu", "kernels/k.cu", true},
		{"/tmp/kernel-gate-base-1/base", "/tmp/kernel-gate-base-1/base/kernels/k.cu", "kernels/k.cu", true},
		{"/work/repo", "/work/repository/k.cu", "", false},
		{"/work/repo", "/work/k.cu", "", false},
		{"/work/repo", "/work/repo", "", false},
		{"", "/work/repo/k.cu", "", false},
	} {
		if got, ok := Under(tt.root, tt.file); got != tt.want || ok != tt.ok {
			t.Errorf("Under(%q, %q) = %q, %v; want %q, %v", tt.root, tt.file, got, ok, tt.want, tt.ok)
		}
	}
}
