// Package config loads kernel-gate.yml: the thresholds of every gate, with overrides per
// kernel glob and per arch, what `kernel-gate run` builds and runs, and where the baseline
// store is. Unknown keys are errors that name the key and its line, so a typo never turns a
// limit off silently. docs/configuration.md is the reference of every key.
//
// A config is loaded in these steps:
//
//  1. Find picks the file: the --config path when given (it must exist), else the first of
//     DefaultPaths (kernel-gate.yml, then .github/kernel-gate.yml) that names anything, else
//     the built-in defaults with an empty Config.Path. A default path that names a broken
//     link is loaded, and fails, rather than falling back to the defaults.
//  2. Load reads it as a regular file within its size cap (package input) and hands it to
//     Parse.
//  3. Parse accepts exactly one YAML document (a second one after "---" is refused naming
//     its line), checks every key against the Go types of the sections, naming the key,
//     its line and the key a typo meant, and decodes the sections: each gate's own Config
//     type (ptxas, sass, sanitizer, correctness, speedup, abrun for bench, guard, ncu) and
//     this package's Run and Baseline.
//  4. Parse then resolves each section in field order (its Resolve method, through package
//     configpos): checks its values and keeps what its gate uses, so that every error names
//     the file and line of the setting that caused it.
//
// After loading, Run.Settings and Baseline.Settings return those sections with their
// defaults filled in; Target describes one harness of run.targets, in its two forms
// (sources that kernel-gate builds, or the repository's own build and harness commands,
// with ReservedEnv and CacheGlob for their environment and binaries). GuardForChange
// returns the guard section a change is judged with: the one of the config at the change's
// base, never the change's own.
package config
