package action

import "github.com/kernel-gate/kernel-gate/internal/procgroup"

// writeOut writes data to file, a path the workflow's inputs name (results-file, or the
// summary and SARIF log beside it), in its directory as procgroup.OpenOutDir opens it (never
// through a link out of the workspace ws); a link or a FIFO of the file's own name is
// refused too.
func writeOut(ws, file string, data []byte) error {
	dir, base, err := procgroup.OpenOutDir(ws, file)
	if err != nil {
		return err
	}
	defer dir.Close()
	return procgroup.WriteArtifactIn(dir, base, data, 0o644)
}
