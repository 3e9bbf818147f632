// Package stores is the list of durable stores compiled in: importing it
// registers each one (store.Register) so store.Open finds the store of any
// supported database. Adding a store adds its import here and nothing in
// the engine.
//
// It may import the store packages (runtime/durable/store/*) and nothing else.
package stores

import (
	// Each import registers its dialect's store from its init.
	_ "skydurable/runtime/durable/store/postgres"
	_ "skydurable/runtime/durable/store/sqlite"
)
