package rules

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Options is a wrapper's option grammar, enough to find the command it runs.
type Options struct {
	Short    string   // short options that take a value
	Long     []string // long options that take the next word as value (written without '=')
	Stop     string   // short options after which no command runs
	StopLong []string // long options after which no command runs
	Assigns  bool     // NAME=value words before the command are skipped
	Skip     int      // positional words before the command (timeout's DURATION)
	Shell    string   // short options that ask for a shell (sudo -s, -i); with any, --shell and --login do too
}

// Wrapper is the option grammar of a wrapper that simply runs its arguments (sudo, nohup,
// timeout, ...): the command after its options is judged as what runs. Wrappers that run
// a script (bash -c, ssh, su -c, screen, tmux, containers) are read by the shell analyzer.
func Wrapper(name string) (Options, bool) {
	switch name {
	case "sudo":
		return Options{Short: "ugCDhprtTUR", Long: []string{"--user", "--group", "--close-from", "--chdir", "--host",
			"--prompt", "--role", "--type", "--command-timeout", "--other-user", "--chroot"},
			Stop: "lvKVe", StopLong: []string{"--list", "--validate", "--remove-timestamp", "--version", "--edit", "--help"},
			Assigns: true, Shell: "si"}, true
	case "doas":
		return Options{Short: "uC", Stop: "L", Shell: "s"}, true
	case "pkexec":
		return Options{Long: []string{"--user"}}, true
	case "nohup", "builtin", "setsid", "busybox", "unbuffer", "catchsegv":
		return Options{}, true
	case "timeout":
		return Options{Short: "sk", Long: []string{"--signal", "--kill-after"}, Skip: 1}, true
	case "exec":
		return Options{Short: "a"}, true
	case "command":
		return Options{Stop: "vV"}, true
	case "nice":
		return Options{Short: "n", Long: []string{"--adjustment"}}, true
	case "ionice":
		return Options{Short: "cn", Stop: "pPu"}, true
	case "stdbuf":
		return Options{Short: "ioe", Long: []string{"--input", "--output", "--error"}}, true
	case "time":
		return Options{Short: "fo", Long: []string{"--format", "--output"}}, true
	case "taskset":
		return Options{Stop: "p", StopLong: []string{"--pid"}, Skip: 1}, true
	case "numactl":
		return Options{Short: "CNmipP", Long: []string{"--cpunodebind", "--physcpubind", "--membind", "--interleave",
			"--preferred", "--preferred-many", "--weighted-interleave", "--cpubind"},
			Stop: "Hs", StopLong: []string{"--hardware", "--show"}}, true
	case "chrt":
		return Options{Short: "TPD", Stop: "p", StopLong: []string{"--pid"}, Skip: 1}, true
	case "nsenter":
		return Options{Short: "tSG", Long: []string{"--target", "--setuid", "--setgid"}}, true
	case "systemd-run":
		return Options{Short: "upEMH", Long: []string{"--unit", "--property", "--description", "--slice", "--setenv", "--uid",
			"--gid", "--nice", "--machine", "--host", "--on-active", "--on-boot", "--on-startup", "--on-unit-active",
			"--on-unit-inactive", "--on-calendar", "--timer-property", "--path-property", "--socket-property",
			"--working-directory", "--service-type", "--expand-environment"}, Assigns: false}, true
	case "unshare":
		return Options{Short: "SGRw", Long: []string{"--setuid", "--setgid", "--root", "--wd", "--map-user", "--map-group"}}, true
	case "sshpass":
		return Options{Short: "pfdP"}, true
	case "setpriv", "caffeinate", "firejail":
		return Options{}, true
	case "xargs":
		return Options{Short: "adEILnPs", Long: []string{"--arg-file", "--delimiter", "--max-args", "--max-procs",
			"--max-chars", "--process-slot-var"}}, true
	}
	return Options{}, false
}

// CommandStart finds where a wrapper's command starts in its arguments. stopped is true
// when an option says no command runs; shell when an option asks for a shell (sudo -s).
func (sp Options) CommandStart(args []string) (idx int, stopped, shell bool) {
	skip := sp.Skip
	i := 0
	for i < len(args) {
		w := args[i]
		if sp.Assigns && IsAssignment(w) {
			i++ // NAME=VALUE, its value maybe unknown (sudo PATH="$PATH" ...)
			continue
		}
		if !Known(w) {
			break
		}
		if w == "--" {
			i++
			break
		}
		if strings.HasPrefix(w, "--") {
			name, _, hasEq := strings.Cut(w, "=")
			if slices.Contains(sp.StopLong, name) {
				return len(args), true, false
			}
			if name == "--shell" || name == "--login" {
				shell = shell || sp.Shell != ""
			}
			if !hasEq && slices.Contains(sp.Long, name) {
				i += 2
				continue
			}
			i++
			continue
		}
		if len(w) > 1 && w[0] == '-' {
			for k := 1; k < len(w); k++ {
				c := w[k]
				if strings.IndexByte(sp.Stop, c) >= 0 {
					return len(args), true, false
				}
				if strings.IndexByte(sp.Shell, c) >= 0 {
					shell = true
				}
				if strings.IndexByte(sp.Short, c) >= 0 {
					if k == len(w)-1 {
						i++ // the value is the next word
					}
					break
				}
			}
			i++
			continue
		}
		if skip > 0 {
			skip--
			i++
			continue
		}
		break
	}
	return min(i, len(args)), false, shell
}

// IsAssignment reports whether a word is NAME=value, NAME literal, the value maybe not.
func IsAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	return ok && syntax.ValidName(name)
}
