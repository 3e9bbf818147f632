package eval

import (
	"errors"

	"skydurable/compiler/syntax"
	"skydurable/runtime/value"
)

// code is a compiled expression: it computes its value in a frame. Names are
// resolved once, at compile time, to a slot index and a frame depth.
type code func(fr *frame) (value.Value, error)

// frame holds the slots of one activation of a function (its parameters
// first, then every let, case and pattern binding in its body); parent is the
// frame of the enclosing function, where free variables live. Frames of up
// to 8 slots are one allocation with their slots (see newFrame).
type frame struct {
	slots  []value.Value
	parent *frame
	// tail carries the next frame of a self tail call out of the body to
	// the trampoline in lambda.run.
	tail *frame
	// depth counts the Sky calls under way on this goroutine's stack (as
	// far as the evaluator can see), so runaway recursion becomes a
	// runtime error instead of a Go stack overflow.
	depth int
}

// maxDepth bounds non-tail recursion. A Sky call costs about a kilobyte of
// Go stack, so this stays far below Go's 1 GB limit.
const maxDepth = 100_000

// frameN are frames with their slots in the same allocation; newFrame
// returns a pointer to the embedded frame, which keeps the whole block alive.
type frame1 struct {
	frame
	s [1]value.Value
}

type frame2 struct {
	frame
	s [2]value.Value
}

type frame3 struct {
	frame
	s [3]value.Value
}

type frame4 struct {
	frame
	s [4]value.Value
}

type frame5 struct {
	frame
	s [5]value.Value
}

type frame6 struct {
	frame
	s [6]value.Value
}

type frame7 struct {
	frame
	s [7]value.Value
}

type frame8 struct {
	frame
	s [8]value.Value
}

func newFrame(nslots int, parent *frame) *frame {
	switch nslots {
	case 0:
		return &frame{parent: parent}
	case 1:
		f := &frame1{frame: frame{parent: parent}}
		f.slots = f.s[:]
		return &f.frame
	case 2:
		f := &frame2{frame: frame{parent: parent}}
		f.slots = f.s[:]
		return &f.frame
	case 3:
		f := &frame3{frame: frame{parent: parent}}
		f.slots = f.s[:]
		return &f.frame
	case 4:
		f := &frame4{frame: frame{parent: parent}}
		f.slots = f.s[:]
		return &f.frame
	case 5:
		f := &frame5{frame: frame{parent: parent}}
		f.slots = f.s[:]
		return &f.frame
	case 6:
		f := &frame6{frame: frame{parent: parent}}
		f.slots = f.s[:]
		return &f.frame
	case 7:
		f := &frame7{frame: frame{parent: parent}}
		f.slots = f.s[:]
		return &f.frame
	case 8:
		f := &frame8{frame: frame{parent: parent}}
		f.slots = f.s[:]
		return &f.frame
	}
	return &frame{slots: make([]value.Value, nslots), parent: parent}
}

// errTailCall is returned by a self tail call in place of calling; the
// enclosing lambda.run loops on frame.tail, so a loop of a million
// iterations uses constant Go stack.
var errTailCall = errors.New("internal: tail call escaped its function")

// lambda is a compiled function body: a top-level or let function, or `\`.
type lambda struct {
	name   string // for messages; "" for an anonymous function
	arity  int
	nslots int
	// direct is true when every parameter is a variable or `_`, which then
	// live in slots 0..arity-1 with no matching.
	direct bool
	// reuseFrame is true when no closure captures the frame, so a self
	// tail call may overwrite it instead of allocating the next one.
	reuseFrame bool
	params     []matcher
	body       code
	src        *source
	pos        []syntax.Pos // position of each parameter pattern, for mismatches
}

// closure is a lambda together with the frame it was created in.
type closure struct {
	lam *lambda
	env *frame
}

func (c *closure) Arity() int { return c.lam.arity }

func (c *closure) Call(args []value.Value) (value.Value, error) {
	fr := newFrame(c.lam.nslots, c.env)
	copy(fr.slots, args)
	return c.lam.run(fr)
}

// run executes the body in fr, whose slots 0..arity-1 hold the arguments.
func (l *lambda) run(fr *frame) (value.Value, error) {
	for {
		if !l.direct {
			for i, m := range l.params {
				if !m(fr.slots[i], fr) {
					return nil, l.src.errorAt(l.pos[i], "this argument pattern does not match "+value.Show(fr.slots[i])+
						"; hint: a function parameter pattern must cover every value of its type (use `case` for the others)")
				}
			}
		}
		v, err := l.body(fr)
		if err == errTailCall {
			fr = fr.tail
			continue
		}
		return v, err
	}
}

// kernelFunc is a Go kernel exposed as a Sky function.
type kernelFunc struct{ k value.Kernel }

func (f *kernelFunc) Arity() int { return f.k.Arity }

func (f *kernelFunc) Call(args []value.Value) (value.Value, error) { return f.k.Fn(args) }

// ctorFunc builds a custom-type value from its arguments.
type ctorFunc struct {
	name  string
	arity int
}

func (f *ctorFunc) Arity() int { return f.arity }

func (f *ctorFunc) Call(args []value.Value) (value.Value, error) {
	return value.Ctor{Name: f.name, Args: append([]value.Value(nil), args...)}, nil
}

// recordFunc is a record alias used as a positional constructor: `R 1 2`
// builds `{ a = 1, b = 2 }` for `type alias R = { a : Int, b : Int }`.
type recordFunc struct {
	names    []string // sorted field names
	perm     []int    // perm[i] is the slot in names of the i-th declared field
	declared []string // the field names in declaration order
}

func (f *recordFunc) Arity() int { return len(f.perm) }

func (f *recordFunc) Call(args []value.Value) (value.Value, error) {
	vals := make([]value.Value, len(f.names))
	for i, a := range args {
		vals[f.perm[i]] = a
	}
	return &value.Record{Names: f.names, Values: vals, Declared: f.declared}, nil
}

// accessorFunc is `.field`.
type accessorFunc struct {
	field string
	src   *source
	pos   syntax.Pos
}

func (f *accessorFunc) Arity() int { return 1 }

func (f *accessorFunc) Call(args []value.Value) (value.Value, error) {
	return f.src.access(f.pos, args[0], f.field)
}

// composeFunc is `f >> g` (first f, then g).
type composeFunc struct{ first, then value.Value }

func (f *composeFunc) Arity() int { return 1 }

func (f *composeFunc) Call(args []value.Value) (value.Value, error) {
	v, err := value.Apply(f.first, args[0])
	if err != nil {
		return nil, err
	}
	return value.Apply(f.then, v)
}
