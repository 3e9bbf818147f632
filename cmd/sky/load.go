package main

import "skydurable/compiler/eval"

// loadProgram loads the program at file with the project's config; on a
// load or compile error it prints the errors to stderr and returns nil.
func loadProgram(file string, cfg config, s streams) *eval.Program {
	prog, err := eval.Load(file, eval.Options{Root: cfg.Root, Stdlib: standardLibrary(cfg)})
	if err != nil {
		// A top-level constant is computed at load, so a runtime error
		// can surface here; it is reported like one from main.
		reportFailure(s, err)
		return nil
	}
	return prog
}
