package sass

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/kernel-gate/kernel-gate/internal/linescan"
)

// Embedded is one cubin or PTX file embedded in a binary, as `cuobjdump --list-elf` (or
// --list-ptx) names it: "ELF file    1: kg_ext.1.sm_90.cubin".
type Embedded struct {
	// Kind is "ELF" (SASS for one arch) or "PTX" (compiled by the driver at load time).
	Kind  string `json:"kind"`
	Index int    `json:"index"`
	Name  string `json:"name"`
	// Arch is the architecture in the name ("sm_90", "sm_90a", "compute_90" for some
	// PTX); empty when the name holds none.
	Arch string `json:"arch,omitempty"`
}

// Listing is what cuobjdump --list-elf (and --list-ptx) printed for one binary.
type Listing struct {
	Files []Embedded `json:"files"`
	// NoDeviceCode is set when cuobjdump said the binary holds no device code at all
	// ("cuobjdump info    : File 'x' does not contain device code").
	NoDeviceCode bool `json:"no_device_code,omitempty"`
}

// Archs are the architectures of the listing's files of one kind ("ELF" or "PTX"), in
// order, each once.
func (l Listing) Archs(kind string) []string {
	var out []string
	for _, f := range l.Files {
		if f.Kind == kind && f.Arch != "" && !contains(out, f.Arch) {
			out = append(out, f.Arch)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ErrListing reports a listing that cannot be trusted: cuobjdump printed an error, or a line
// that names an embedded file does not read as one.
var ErrListing = errors.New("the cuobjdump listing cannot be read")

// maxEmbedded bounds the files one listing may name (a fat binary of every arch of every
// kernel library has hundreds, not millions).
const maxEmbedded = 100_000

var (
	// listLine is "ELF file    1: name" (cuobjdump pads the index to a column).
	listLine = regexp.MustCompile(`^(ELF|PTX) file +([0-9]+): (.*)$`)
	// archInName is the arch among a file name's dot-separated parts: kg.1.sm_90a.cubin.
	archInName = regexp.MustCompile(`^(sm|compute)_[0-9]{2,3}[a-z]?$`)
)

// ParseListELF reads `cuobjdump --list-elf` (and --list-ptx) output. Lines that are not
// listing lines (a "+ cuobjdump ..." echo, blank lines, an "exit=N" trailer) are skipped;
// "cuobjdump info : ... does not contain device code" sets NoDeviceCode. A "cuobjdump fatal"
// or "error" line, and a listing line whose index or name is missing, fail with ErrListing
// naming the line: a listing cut or garbled could hide the one cubin that matters.
func ParseListELF(r io.Reader) (Listing, error) {
	var l Listing
	lineNo := 0
	var bad error // the first line that cannot be trusted; the rest is not read
	err := linescan.Each(r, maxLine, func(raw []byte) {
		lineNo++
		if bad != nil {
			return
		}
		n := len(l.Files)
		if bad = l.line(raw, lineNo); bad == nil && len(l.Files) > n && !bytes.HasSuffix(raw, []byte("\n")) {
			// A listing line without its line end may have lost the end of its name, the arch.
			bad = fmt.Errorf("%w: the last line (%d) names a file but has no line end: the listing is cut", ErrListing, lineNo)
		}
	})
	if err == nil {
		err = bad
	}
	if err != nil {
		return Listing{}, err
	}
	if l.NoDeviceCode && len(l.Files) > 0 {
		return Listing{}, fmt.Errorf("%w: it lists %d embedded files and also says the binary holds no device code", ErrListing, len(l.Files))
	}
	return l, nil
}

// line reads one line of a listing.
func (l *Listing) line(raw []byte, lineNo int) error {
	t := string(bytes.TrimSpace(bytes.TrimRight(raw, "\r")))
	if t == "" {
		return nil
	}
	if m := listLine.FindStringSubmatch(t); m != nil {
		idx, err := strconv.Atoi(m[2])
		name := strings.TrimSpace(m[3])
		if err != nil || idx <= 0 || name == "" {
			return fmt.Errorf("%w: line %d %s: no file index and name", ErrListing, lineNo, quote([]byte(t)))
		}
		if strings.IndexFunc(name, unicode.IsControl) >= 0 {
			// A carriage return or another control character inside a line: no name
			// cuobjdump prints, and one a report could not show as it is.
			return fmt.Errorf("%w: line %d %s: a control character in the file name", ErrListing, lineNo, quote([]byte(t)))
		}
		if len(l.Files) == maxEmbedded {
			return fmt.Errorf("%w: more than %d embedded files", ErrListing, maxEmbedded)
		}
		l.Files = append(l.Files, Embedded{Kind: m[1], Index: idx, Name: name, Arch: archOf(name)})
		return nil
	}
	if strings.HasPrefix(t, "ELF file") || strings.HasPrefix(t, "PTX file") {
		return fmt.Errorf("%w: line %d %s is not \"ELF file N: NAME\"", ErrListing, lineNo, quote([]byte(t)))
	}
	head, msg, ok := strings.Cut(t, ":")
	if !ok {
		return nil
	}
	switch f := strings.Fields(head); {
	case len(f) == 2 && f[0] == "cuobjdump" && (f[1] == "fatal" || f[1] == "error"):
		return fmt.Errorf("%w: line %d: %s", ErrListing, lineNo, quote([]byte(t)))
	case len(f) == 2 && f[0] == "cuobjdump" && f[1] == "info" && strings.Contains(msg, "does not contain device code"):
		l.NoDeviceCode = true
	}
	return nil
}

// archOf finds the arch among the dot-separated parts of an embedded file's name.
func archOf(name string) string {
	parts := strings.Split(name, ".")
	for i := len(parts) - 1; i >= 0; i-- {
		if archInName.MatchString(parts[i]) {
			return parts[i]
		}
	}
	return ""
}
