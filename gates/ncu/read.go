package ncu

import (
	"io"

	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// ReadGate judges `ncu --csv` output saved elsewhere ("-" is stdin): every file's launches
// together.
func ReadGate(files []string, stdin io.Reader, cfg Config) (result.Gate, error) {
	var reps []*Report
	err := input.Files(files, stdin, func(r io.Reader, name string) error {
		rep, err := Parse(r, name)
		if err != nil {
			return err
		}
		reps = append(reps, rep)
		return nil
	})
	if err != nil {
		return result.Gate{}, err
	}
	return Evaluate(Merge(reps...), cfg)
}
