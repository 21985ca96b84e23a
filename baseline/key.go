package baseline

// Keys: which runs may be compared, and the file each key's history lives in.

import (
	"errors"
	"fmt"
	"strings"
)

// Key says which measurements may be compared: those taken on the same GPU model with the
// same compute capability. Timings, register counts of `-arch native` builds and even
// numerical error differ between an L4 and an H100, so each GPU keeps its own history. The
// CUDA toolkit and the driver are not part of the key: they change on the same runner
// over time, and whether an entry made with another one may still be compared is a
// policy (Constraints), not an identity.
type Key struct {
	// GPU is the name nvidia-smi prints ("NVIDIA H200").
	GPU string `json:"gpu"`
	// Arch is the compute capability as an arch ("sm_90").
	Arch string `json:"arch"`
}

// NewKey checks and normalizes a key: the GPU name's spaces collapsed, the compute
// capability written as an arch ("9.0", "90" and "compute_90" become "sm_90").
func NewKey(gpu, arch string) (Key, error) {
	k := Key{GPU: strings.Join(strings.Fields(gpu), " "), Arch: normalizeArch(arch)}
	switch {
	case k.GPU == "":
		return Key{}, errors.New("no GPU name: a baseline is kept per GPU, so the result must name the GPU it ran on")
	case k.Arch == "":
		return Key{}, fmt.Errorf("no compute capability for %s: a baseline is kept per GPU and compute capability", k.GPU)
	case slug(k.GPU, false) == "":
		return Key{}, fmt.Errorf("GPU name %q has no letter or digit to name its baseline file by", k.GPU)
	case !validArch(k.Arch):
		return Key{}, fmt.Errorf("compute capability %q of %s is not sm_NN (or N.N)", arch, k.GPU)
	}
	return k, nil
}

// String is how messages name the key: "NVIDIA H200 (sm_90)".
func (k Key) String() string { return k.GPU + " (" + k.Arch + ")" }

// File is the key's file name in a directory or on the branch: "nvidia-h200.sm_90.json".
// Names that differ only in case, spaces or punctuation ("NVIDIA H100 80GB HBM3" and
// "NVIDIA H100-80GB-HBM3") are one GPU and share a file.
func (k Key) File() string { return slug(k.GPU, false) + "." + slug(k.Arch, true) + fileSuffix }

// same reports whether two keys name the same file, the key's real identity.
func (k Key) same(o Key) bool { return k.File() == o.File() }

const fileSuffix = ".json"

// slug lowercases s and turns every run of other characters than letters and digits (and
// '_' where keepUnderscore) into one '-'.
func slug(s string, keepUnderscore bool) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		ok := (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || (keepUnderscore && r == '_')
		if !ok {
			dash = b.Len() > 0
			continue
		}
		if dash {
			b.WriteByte('-')
			dash = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// normalizeArch writes a compute capability as nvidia-smi's "9.0", the harness's "9.0",
// ncu's "90" or an arch "sm_90"/"compute_90" all as "sm_90". An arch suffix ("sm_90a") is
// kept: it is not a device's, but a key built from one must not silently lose it.
func normalizeArch(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return ""
	}
	for _, p := range []string{"sm_", "compute_", "sm", "compute"} {
		if rest, ok := strings.CutPrefix(s, p); ok {
			return "sm_" + rest
		}
	}
	if major, minor, ok := strings.Cut(s, "."); ok {
		return "sm_" + major + minor
	}
	return "sm_" + s
}

func validArch(a string) bool {
	rest, ok := strings.CutPrefix(a, "sm_")
	if !ok || len(rest) < 2 {
		return false
	}
	digits := 0
	for digits < len(rest) && rest[digits] >= '0' && rest[digits] <= '9' {
		digits++
	}
	suffix := rest[digits:]
	return digits >= 2 && (suffix == "" || suffix == "a" || suffix == "f")
}
