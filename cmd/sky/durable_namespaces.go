package main

import (
	"context"
	"fmt"
	"io"

	"skydurable/runtime/durable"
)

// `sky durable namespaces` lists the namespaces of a database (those with
// runs), marking the one the command works in; every other subcommand works
// in one namespace (--namespace).

func init() {
	registerDurable(durableCommand{
		use:      "namespaces [--json]",
		readOnly: true,
		short:    "the namespaces that have runs; * marks the one --namespace selects",
		long: `List the namespaces that have runs in the database, sorted, marking with * the one this command
works in (--namespace, else SKY_DURABLE_NAMESPACE, else [durable] namespace of sky.toml, else default).
Every other subcommand sees and changes the runs of one namespace only.`,
		example: `  sky durable namespaces
  sky durable ls --namespace billing`,
		flags: durableJSONFlag,
		run:   durableNamespaces,
	})
}

// namespacesJSON is `namespaces --json`.
type namespacesJSON struct {
	Current    string   `json:"current"`
	Namespaces []string `json:"namespaces"`
}

func durableNamespaces(ctx context.Context, e *durable.Engine, f *durableFlags, _ []string, out io.Writer) error {
	list, err := e.Namespaces(ctx)
	if err != nil {
		return err
	}
	if f.json {
		return writeJSON(out, namespacesJSON{Current: e.Namespace(), Namespaces: append([]string{}, list...)})
	}
	if len(list) == 0 {
		fmt.Fprintln(out, "no namespace has runs yet")
		return nil
	}
	for _, ns := range list {
		mark := " "
		if ns == e.Namespace() {
			mark = "*"
		}
		fmt.Fprintf(out, "%s %s\n", mark, ns)
	}
	return nil
}

// namespaceNote is ", namespace N" for an engine outside the default
// namespace, "" in it.
func namespaceNote(e *durable.Engine) string {
	if e.Namespace() == durable.DefaultNamespace {
		return ""
	}
	return ", namespace " + e.Namespace()
}
