package durable

// An attempt is one claim of a run: claimed, then running its body, then
// exactly one of the outcomes below, decided once by Ctx.end when the body
// has returned. advance acts on the outcome and on nothing else, so the
// precedence between them (a lost lease before anything the body did, a
// step failure before what the body made of it) lives in one place.

// attemptOutcome is how an attempt ended.
type attemptOutcome int

const (
	// attemptCrashed: an injected crash point stopped the worker
	// (Options.OnBoundary); the run stays claimed until its lease runs out.
	attemptCrashed attemptOutcome = iota
	// attemptLeaseLost: another worker owns the run now, or it was
	// cancelled or timed out; the attempt writes nothing more.
	attemptLeaseLost
	// attemptHalted: a step's task asked the program to stop; the run is
	// released, due at once, as by a stopping worker.
	attemptHalted
	// attemptSuspended: the body parked on a sleep, a signal, a child or a
	// limit, and its suspension is written.
	attemptSuspended
	// attemptDone: the body returned a value within the payload cap; the
	// run completes with it.
	attemptDone
	// attemptFailed: the body failed, went on past a step it could not
	// journal, misused the API, or returned an output over the cap; the
	// run is released when the worker is stopping, else retried or dead.
	attemptFailed
)

// attemptEnd is an attempt's outcome and the error that decided it
// (attemptHalted, attemptFailed).
type attemptEnd struct {
	outcome attemptOutcome
	err     error
}

// end decides how the attempt whose body returned out and bodyErr ended:
// an injected crash, then a lost lease (nothing may be written), then a
// halt, a suspension, and last the body's own result. A step that could
// not be journalled turns a success into a failure; a step failure being
// retried, and then a misuse, replace whatever the body made of them.
func (c *Ctx) end(out string, bodyErr error) attemptEnd {
	suspended, lost := c.state()
	if broken := c.brokenErr(); bodyErr == nil && broken != nil {
		bodyErr = broken // the body went on past a step it could not journal
	}
	if failed := c.retryErr(); failed != nil {
		bodyErr = failed // a step failed and is retried, whatever the body made of it
	}
	if misuse := c.misuseErr(); misuse != nil {
		bodyErr = misuse // permanent, whatever the body made of it
	}
	halt := c.haltErr(bodyErr)
	switch {
	case c.crashedErr() != nil:
		return attemptEnd{outcome: attemptCrashed}
	case lost:
		return attemptEnd{outcome: attemptLeaseLost}
	case halt != nil:
		return attemptEnd{outcome: attemptHalted, err: halt}
	case suspended:
		return attemptEnd{outcome: attemptSuspended}
	case bodyErr == nil:
		if err := c.checkPayload(func() string { return "the output" }, out); err != nil {
			return attemptEnd{outcome: attemptFailed, err: err}
		}
		return attemptEnd{outcome: attemptDone}
	}
	return attemptEnd{outcome: attemptFailed, err: bodyErr}
}
