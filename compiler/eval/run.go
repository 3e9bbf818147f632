package eval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"skydurable/compiler/diag"
	"skydurable/runtime/task"
	"skydurable/runtime/value"
	skyapp "skydurable/stdlib/app"
)

// RunMain forces the entry module's `main : Task Error ()` under ctx. As in
// real Sky, a `main` that is an App (`App.cli {...}`) is run as `App.run`
// would, and one that is a plain value has nothing left to run (it was
// computed at load); a function is a runtime error. The error is nil on
// success; otherwise the Task's failure (a *task.Error, or a
// *value.Failure for a non-Error failure) or a *value.RuntimeError when the
// program itself went wrong.
func (p *Program) RunMain(ctx context.Context) error {
	m, err := p.Value("main")
	if err != nil {
		return p.missing(err, "a program defines `main : Task Error ()`")
	}
	if o, ok := m.(value.Opaque); ok && o.Kind == skyapp.Kind {
		// An App runs as `App.run app` would, as real Sky runs it.
		if m, err = p.kernels["App_run"].Fn([]value.Value{o}); err != nil {
			return err
		}
	}
	t, ok := m.(value.Task)
	if f, isFunc := m.(value.Func); isFunc {
		return p.entry.src.errorAt(p.entry.values["main"].pos, fmt.Sprintf("`main` is a function of %d argument(s), so there is nothing to run; hint: define `main : Task Error ()` without parameters", f.Arity()))
	}
	if !ok {
		return nil // a plain value was computed at load: nothing more to run, as real Sky
	}
	p.ctx = ctx
	_, err = task.Run(ctx, t.T)
	// A kernel called by another kernel (`Task.andThen System.exit`) knows
	// no position: the report then points at `main`, not at no file.
	var re *value.RuntimeError
	if errors.As(err, &re) && re.Line == 0 {
		return p.entry.src.wrapAt(p.entry.values["main"].pos, err)
	}
	return err
}

// missing is the error for an entry module without the value RunMain or
// RunTests needs (err says which); a runtime error computing it is kept.
func (p *Program) missing(err error, hint string) error {
	if value.IsRuntimeError(err) {
		return err
	}
	return diag.Diagnostic{Title: titleLoad, File: p.entry.src.name, Message: err.Error(), Hint: hint}
}

// testsError is the runtime error for a malformed `tests`, at its definition.
func (p *Program) testsError(msg string) error {
	return p.entry.src.errorAt(p.entry.values["tests"].pos, msg)
}

// TestReport is the outcome of RunTests.
type TestReport struct {
	Passed, Failed int
}

// RunTests runs the entry module's `tests : List Test` (Sky.Test) and prints
// one line per test to w: `  ok    name` or `  FAIL  name` followed by the
// failure message indented; then `N passed, M failed`. A test inside
// `suite "s" [...]` is named `s / name`. A test body may return a TestResult
// or a Task of one; a runtime error or a Task failure fails that test only.
func (p *Program) RunTests(ctx context.Context, w io.Writer) (TestReport, error) {
	var rep TestReport
	v, err := p.Value("tests")
	if err != nil {
		return rep, p.missing(err, "a test module defines `tests : List Test`")
	}
	l, ok := v.(*value.List)
	if !ok {
		return rep, p.testsError("`tests` must be a List Test, but it is " + value.Show(v))
	}
	p.ctx = ctx
	for _, t := range l.Slice() {
		if err := p.runTest(ctx, w, "", t, &rep); err != nil {
			return rep, err
		}
	}
	fmt.Fprintf(w, "%d passed, %d failed\n", rep.Passed, rep.Failed)
	return rep, nil
}

func (p *Program) runTest(ctx context.Context, w io.Writer, prefix string, t value.Value, rep *TestReport) error {
	c, ok := t.(value.Ctor)
	if !ok || len(c.Args) != 2 {
		return p.testsError("a test must be built with Sky.Test's `test` or `suite`, but got " + value.Show(t))
	}
	name, _ := c.Args[0].(string)
	full := prefix + name
	switch c.Name {
	case "Suite":
		tests, _ := c.Args[1].(*value.List)
		for _, sub := range tests.Slice() {
			if err := p.runTest(ctx, w, full+" / ", sub, rep); err != nil {
				return err
			}
		}
		return nil
	case "Test":
		msg := testOutcome(ctx, c.Args[1])
		if msg == "" {
			rep.Passed++
			fmt.Fprintf(w, "  ok    %s\n", full)
			return nil
		}
		rep.Failed++
		fmt.Fprintf(w, "  FAIL  %s\n%s\n", full, indent(msg, "        "))
		return nil
	}
	return p.testsError("a test must be `Test` or `Suite`, but got " + value.Show(t))
}

// testOutcome runs one test body; "" means it passed, else the message.
func testOutcome(ctx context.Context, body value.Value) string {
	r, err := value.Apply(body, value.Unit{})
	if err != nil {
		return errorText(err)
	}
	if t, ok := r.(value.Task); ok {
		r, err = task.Run(ctx, t.T)
		if err != nil {
			if value.IsRuntimeError(err) {
				return errorText(err)
			}
			return "the test's task failed: " + failureText(err)
		}
	}
	c, ok := r.(value.Ctor)
	switch {
	case ok && c.Name == "Pass":
		return ""
	case ok && c.Name == "Fail" && len(c.Args) == 1:
		if s, ok := c.Args[0].(string); ok {
			return s
		}
		return value.Show(c.Args[0])
	}
	return "a test must give a TestResult (Pass or Fail), but this one gave " + value.Show(r)
}

// errorText renders a test's runtime error as the CLI renders one; a
// System.exit in a test fails that test (the other tests still run).
func errorText(err error) string {
	var exit *value.Exit
	if errors.As(err, &exit) {
		return fmt.Sprintf("the test called System.exit %d, which cannot stop sky test; "+
			"fail a test with Sky.Test.fail or a failing Task", exit.Code)
	}
	if ds, ok := Diagnostics(err); ok {
		return ds.Error()
	}
	return err.Error()
}

// failureText renders a Task failure: Sky's Error as "<Label>: <message>",
// any other failure value as Debug.toString shows it.
func failureText(err error) string {
	var f *value.Failure
	if errors.As(err, &f) {
		return value.Show(f.V)
	}
	return task.As(err).Error()
}

// FailureText renders the failure of `main` for the CLI.
func FailureText(err error) string { return failureText(err) }

// indent puts pad before every line of s that is not empty.
func indent(s, pad string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = pad + l
		}
	}
	return strings.Join(lines, "\n")
}
