package childenv

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// A guard against the next exec site: every function outside the tests that makes an
// exec.Cmd sets its Env through Environ (and sets it no other way), and nothing starts a
// process below exec.Cmd. procgroup.Command is such a function, and procgroup.Run and
// procgroup.Start go through it, so the commands they make and the Specs they are given
// need nothing more.
func TestEveryExecSiteUsesEnviron(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	sites := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			var cmds, viaCommand, throughEnviron int
			var other []token.Pos
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CallExpr:
					switch pkg, fun := selector(n.Fun); {
					case pkg == "exec" && (fun == "Command" || fun == "CommandContext"):
						cmds++
					case pkg == "procgroup" && fun == "Command":
						// It sets Env through Environ; the caller must not set it again.
						viaCommand++
					case pkg == "syscall" && fun == "Exec" && filepath.ToSlash(rel) == "internal/childenv/seal_linux.go" && fn.Name.Name == "Seal":
						// kernel-gate itself, started again without the credentials (the
						// environment it is given is Secret-free: TestNoAncestorHoldsAToken).
					case pkg == "os" && fun == "StartProcess", pkg == "syscall" && (fun == "Exec" || fun == "ForkExec" || fun == "StartProcess"):
						t.Errorf("%s: %s.%s starts a process without an exec.Cmd: use exec.CommandContext with Env: childenv.Environ", fset.Position(n.Pos()), pkg, fun)
					}
				case *ast.AssignStmt:
					for i, lhs := range n.Lhs {
						sel, ok := lhs.(*ast.SelectorExpr)
						if !ok || sel.Sel.Name != "Env" || i >= len(n.Rhs) {
							continue
						}
						if call, ok := n.Rhs[i].(*ast.CallExpr); ok {
							if pkg, fun := selector(call.Fun); pkg == "childenv" && fun == "Environ" {
								throughEnviron++
								continue
							}
						}
						other = append(other, n.Pos())
					}
				}
				return true
			})
			if cmds > 0 && throughEnviron == 0 {
				t.Errorf("%s: %s makes %d exec.Cmd without setting Env = childenv.Environ(...): the child would inherit kernel-gate's environment", rel, fn.Name.Name, cmds)
			}
			for _, pos := range other {
				if cmds > 0 || viaCommand > 0 {
					t.Errorf("%s: %s sets an Env other than through childenv.Environ beside its exec.Cmd", fset.Position(pos), fn.Name.Name)
				}
			}
			sites += cmds + viaCommand
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if sites < 8 {
		t.Errorf("found %d exec sites: the scan is not reading the repository (%s)", sites, root)
	}
}

// selector splits pkg.Fun.
func selector(e ast.Expr) (string, string) {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return "", ""
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return "", ""
	}
	return id.Name, sel.Sel.Name
}
