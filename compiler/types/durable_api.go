package types

import "skydurable/compiler/syntax"

// The workflow rules read Std.Durable through the types it declares, not
// through a list of its names, so a function added to Durable.sky is covered
// the day it is written: a function returning a WorkflowDef that takes a
// `Ctx -> i -> Task Error o` registers a workflow body, and a function whose
// first argument is the Ctx and that returns a Task is a durable operation.
// Only the journal ids the engine builds (stepIDs) are a table, and a test
// (TestDurableExportsAreClassified) keeps it equal to the derived operations.

const durableModule = "Std.Durable"

// durableKind is what a workflow rule makes of a value Std.Durable exposes.
type durableKind int

const (
	// durablePure is not a Task (a codec, `conn`, `erase`, a Cmd): nothing
	// runs when a body uses it.
	durablePure durableKind = iota
	// durableOperation takes the Ctx and returns a Task: it is journalled,
	// so it belongs between steps and never inside one.
	durableOperation
	// durableBodyTaking returns a WorkflowDef from a workflow body: the
	// rules check the body it is given.
	durableBodyTaking
	// durableEffect is a Task that is not journalled (`start`, `signal`,
	// `poll`, `status`): between steps it is an effect like any other.
	durableEffect
)

// String names the kind as the docs do.
func (k durableKind) String() string {
	return [...]string{"pure", "durable operation", "body-taking", "effect"}[k]
}

// classifyDurable says what a value of type t (a Std.Durable export) is to
// the workflow rules.
func classifyDurable(t Type) durableKind {
	params, res := uncurry(t)
	switch {
	case isDurableCon(res, "WorkflowDef") && bodyParam(params) >= 0:
		return durableBodyTaking
	case len(params) > 0 && isDurableCon(params[0], "Ctx") && isCon(res, "Task"):
		return durableOperation
	case isCon(res, "Task"):
		return durableEffect
	}
	return durablePure
}

// stepID is where a durable operation takes the id of its journal entry,
// and the prefix the engine puts before it (`awaitSignal ctx codec "go"` is
// the entry "signal:go"); arg is -1 for an operation that numbers its own
// entries (`sleep` is "sleep:1", "sleep:2", ...).
type stepID struct {
	arg    int
	prefix string
}

// stepIDs is every durable operation of Std.Durable with its journal id,
// as runtime/durable names the entries.
var stepIDs = map[string]stepID{
	"step": {2, ""}, "stepValue": {2, ""}, "transaction": {2, ""}, "sleepAs": {1, ""},
	"sleep": {-1, ""}, "awaitSignal": {2, "signal:"}, "awaitSignalFor": {2, "signal:"},
	"startChild": {2, "child:"}, "awaitChild": {2, "await:"}, "all": {-1, ""}, "setEvent": {-1, ""},
}

// uncurry splits a function type into its parameters and final result.
func uncurry(t Type) (params []Type, res Type) {
	for {
		f, ok := unalias(t).(*Fun)
		if !ok {
			return params, t
		}
		params = append(params, f.Arg)
		t = f.Res
	}
}

// isDurableCon reports whether t is the Std.Durable type name.
func isDurableCon(t Type, name string) bool {
	c, ok := unalias(t).(*Con)
	return ok && c.Module == durableModule && c.Name == name
}

// isWorkflowBody reports whether t is `Ctx -> i -> Task Error o`.
func isWorkflowBody(t Type) bool {
	params, res := uncurry(t)
	return len(params) == 2 && isDurableCon(params[0], "Ctx") && isCon(res, "Task")
}

// bodyParam is the index of the first workflow-body parameter, or -1.
func bodyParam(params []Type) int {
	for i, p := range params {
		if isWorkflowBody(p) {
			return i
		}
	}
	return -1
}

// runsEffect reports whether a parameter of type t is an effect the
// operation runs: a Task (`step`'s) or a function to a Task
// (`transaction`'s `Db -> Task Error a`).
func runsEffect(t Type) bool {
	params, res := uncurry(t)
	return isCon(res, "Task") && (len(params) == 0 || !isDurableCon(params[0], "Ctx"))
}

// durableKindOf is the kind of the Std.Durable value a name refers to, or
// durablePure when it refers to anything else.
func (i *Info) durableKindOf(ref Ref) durableKind {
	if ref.Kind != RefTopLevel || ref.Module != durableModule {
		return durablePure
	}
	if v := i.Values[durableModule][ref.Name]; v != nil {
		return classifyDurable(v.Scheme.Type)
	}
	return durablePure
}

// durableCall is a call of a Std.Durable durable operation: its name, the
// declared types of its parameters and its arguments as written.
type durableCall struct {
	head   *syntax.Var
	name   string
	params []Type
	args   []syntax.Expr
}

// asDurableOp returns the durable operation e calls, if it calls one.
func (i *Info) asDurableOp(e syntax.Expr) (durableCall, bool) {
	head, args, ok := call(e)
	v, isVar := head.(*syntax.Var)
	if !ok || !isVar {
		return durableCall{}, false
	}
	ref := i.Refs[v]
	if i.durableKindOf(ref) != durableOperation {
		return durableCall{}, false
	}
	params, _ := uncurry(i.Values[durableModule][ref.Name].Scheme.Type)
	return durableCall{head: v, name: ref.Name, params: params, args: args}, true
}

// journalID is the literal journal id of the call and the id as written,
// or ok false when the id is not a literal (or the operation numbers its
// own).
func (dc durableCall) journalID() (id string, lit *syntax.StringLit, ok bool) {
	sid, known := stepIDs[dc.name]
	if !known || sid.arg < 0 || sid.arg >= len(dc.args) {
		return "", nil, false
	}
	lit, ok = dc.args[sid.arg].(*syntax.StringLit)
	if !ok {
		return "", nil, false
	}
	return sid.prefix + lit.Value, lit, true
}

// effectArgs are the arguments the operation runs as its effect (the Task
// of `step`, the function of `transaction`).
func (dc durableCall) effectArgs() []syntax.Expr {
	var out []syntax.Expr
	for i, a := range dc.args {
		if i < len(dc.params) && runsEffect(dc.params[i]) {
			out = append(out, a)
		}
	}
	return out
}

// registrationCall is a call that registers a workflow body: the declared
// types of the callee's parameters, the arguments, and the index of the
// body among them.
type registrationCall struct {
	params []Type
	args   []syntax.Expr
	body   int
}

// asRegistration returns the registration e is, if it is one: a call (not
// a partial application short of the body) of a function that returns a
// WorkflowDef and takes a workflow body. A workflow body given there is not
// run by the code around the call, so the rules of that code skip it.
func (i *Info) asRegistration(e syntax.Expr) (registrationCall, bool) {
	if _, isApp := e.(*syntax.App); !isApp {
		if b, isPipe := e.(*syntax.BinOp); !isPipe || (b.Op != "|>" && b.Op != "<|") {
			return registrationCall{}, false
		}
	}
	head, args, _ := call(e)
	v, ok := head.(*syntax.Var)
	if !ok {
		return registrationCall{}, false
	}
	params, res := uncurry(i.TypeOf(v))
	idx := bodyParam(params)
	if !isDurableCon(res, "WorkflowDef") || idx < 0 || len(args) <= idx {
		return registrationCall{}, false
	}
	return registrationCall{params: params, args: args, body: idx}, true
}
