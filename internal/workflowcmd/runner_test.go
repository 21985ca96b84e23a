package workflowcmd

import (
	"errors"
	"strings"
	"unicode"
)

// This file models how the GitHub Actions runner reads a step's log and its file commands
// (actions/runner: src/Runner.Common/ActionCommand.cs, src/Runner.Worker/FileCommandManager.cs,
// src/Runner.Worker/ActionCommandManager.cs), so that tests check what the runner would do,
// not what this package meant to write.

// command is one parsed workflow command.
type command struct {
	name  string
	props map[string]string
	data  string
}

// runnerLines splits output as the runner's StreamReader.ReadLine does: at LF, CR or CRLF.
func runnerLines(s string) []string {
	var lines []string
	for s != "" {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i])
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			i++
		}
		s = s[i+1:]
	}
	return lines
}

// registered are the runner's command names (ActionCommandManager's extensions).
var registered = map[string]bool{
	"add-mask": true, "add-path": true, "set-env": true, "set-output": true, "save-state": true,
	"add-matcher": true, "remove-matcher": true, "warning": true, "error": true, "notice": true,
	"debug": true, "group": true, "endgroup": true, "echo": true, "stop-commands": true,
}

// parseRunner returns the commands a log line holds for the runner, with the stop-commands
// state machine: while commands are stopped only "::TOKEN::" (or ##[TOKEN]) resumes.
func parseRunner(out string) []command {
	var cmds []command
	stopToken := ""
	for _, line := range runnerLines(out) {
		names := registered
		if stopToken != "" {
			names = map[string]bool{stopToken: true}
		}
		c, ok := tryParseV2(line, names)
		if !ok {
			c, ok = tryParse(line, names)
		}
		if !ok {
			continue
		}
		if stopToken != "" {
			stopToken = ""
			continue
		}
		if c.name == "stop-commands" {
			stopToken = strings.ToLower(c.data)
		}
		cmds = append(cmds, c)
	}
	return cmds
}

// tryParseV2 is ActionCommand.TryParseV2 with ordinal comparisons.
func tryParseV2(message string, names map[string]bool) (command, bool) {
	message = strings.TrimLeftFunc(message, unicode.IsSpace)
	if !strings.HasPrefix(message, "::") {
		return command{}, false
	}
	end := strings.Index(message[2:], "::")
	if end < 0 {
		return command{}, false
	}
	end += 2
	info := message[2:end]
	name, props, hasProps := strings.Cut(info, " ")
	if !names[strings.ToLower(name)] {
		return command{}, false
	}
	c := command{name: name, props: map[string]string{}}
	if hasProps {
		for _, p := range strings.Split(strings.TrimSpace(props), ",") {
			if p == "" {
				continue
			}
			if k, v, ok := strings.Cut(p, "="); ok && k != "" && v != "" {
				c.props[strings.ToLower(k)] = unescapeProperty(v)
			}
		}
	}
	c.data = unescapeData(message[end+2:])
	return c, true
}

// tryParse is ActionCommand.TryParse (the legacy ##[name]data form), ordinal.
func tryParse(message string, names map[string]bool) (command, bool) {
	i := strings.Index(message, "##[")
	if i < 0 {
		return command{}, false
	}
	rb := strings.IndexByte(message[i:], ']')
	if rb < 0 {
		return command{}, false
	}
	info := message[i+3 : i+rb]
	name, _, _ := strings.Cut(info, " ")
	if !names[strings.ToLower(name)] {
		return command{}, false
	}
	return command{name: name, data: message[i+rb+1:]}, true
}

// unescapeData and unescapeProperty replace in the runner's order, one mapping at a time.
func unescapeData(s string) string {
	for _, m := range [][2]string{{"%0D", "\r"}, {"%0A", "\n"}, {"%25", "%"}} {
		s = strings.ReplaceAll(s, m[0], m[1])
	}
	return s
}

func unescapeProperty(s string) string {
	for _, m := range [][2]string{{"%0D", "\r"}, {"%0A", "\n"}, {"%3A", ":"}, {"%2C", ","}, {"%25", "%"}} {
		s = strings.ReplaceAll(s, m[0], m[1])
	}
	return s
}

// parseFileCommands reads a GITHUB_OUTPUT file as FileCommandManager does on Linux (lines
// end at LF): NAME=VALUE and NAME<<DELIMITER lines.
func parseFileCommands(text string) (map[string]string, error) {
	out := map[string]string{}
	lines := strings.Split(text, "\n")
	if strings.HasSuffix(text, "\n") {
		lines = lines[:len(lines)-1]
	}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if line == "" {
			continue
		}
		eq := strings.Index(line, "=")
		hd := strings.Index(line, "<<")
		switch {
		case eq >= 0 && (hd < 0 || eq < hd):
			k, v, _ := strings.Cut(line, "=")
			out[k] = v
		case hd >= 0:
			k, delim, _ := strings.Cut(line, "<<")
			if k == "" || delim == "" {
				return nil, errors.New("empty name or delimiter: " + line)
			}
			var val []string
			for i++; ; i++ {
				if i >= len(lines) {
					return nil, errors.New("delimiter not found: " + delim)
				}
				if lines[i] == delim {
					break
				}
				val = append(val, lines[i])
			}
			out[k] = strings.Join(val, "\n")
		default:
			return nil, errors.New("invalid line: " + line)
		}
	}
	return out, nil
}
