package durable

import (
	"context"

	"skydurable/runtime/db"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
	"skydurable/runtime/value"
	skycodec "skydurable/stdlib/codec"
	skydb "skydurable/stdlib/db"
)

// SnapshotKernels returns the Sky kernels of Durable.saveSnapshotIfNewer
// (real Sky's write-if-newer with the caller's sequence, saying whether it
// wrote; Durable.saveSnapshot is it without the Bool), Durable.loadSnapshot
// and Durable.saveSnapshotAuto (the stored sequence plus one, never over a
// snapshot that no longer decodes, in the order the Tasks were made):
//
//	saveSnapshotIfNewer : Db -> String -> Codec a -> Int -> a -> Task Error Bool
//	saveSnapshotIfNewer = Ffi.kernel "Durable_saveSnapshotIfNewer"
//	loadSnapshot : Db -> String -> Codec a -> Task Error (Maybe a)
//	loadSnapshot = Ffi.kernel "Durable_loadSnapshot"
//	saveSnapshotAuto : Db -> String -> Codec a -> a -> Task Error ()
//	saveSnapshotAuto = Ffi.kernel "Durable_saveSnapshotAuto"
func SnapshotKernels() []value.Kernel {
	stores := durable.NewSnapshotStores()
	return []value.Kernel{
		{Name: "Durable_saveSnapshotIfNewer", Arity: 5, Fn: func(a []value.Value) (value.Value, error) {
			d, id, cd, err := snapshotArgs("Durable.saveSnapshot", a)
			if err != nil {
				return nil, err
			}
			// A sequence below 1 fails the Task (InvalidInput, from
			// SnapshotStore.Save) rather than the program, as an empty id does.
			seq, ok := a[3].(int64)
			if !ok {
				return nil, value.BadArg("Durable.saveSnapshot", "a sequence number (Int)", a[3])
			}
			model := a[4]
			return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
				wrote, err := durable.SaveSnapshot(ctx, stores.For(d), id, seq, cd, model)
				if err != nil {
					return nil, err
				}
				return wrote, nil
			})}, nil
		}},
		{Name: "Durable_loadSnapshot", Arity: 3, Fn: func(a []value.Value) (value.Value, error) {
			d, id, cd, err := snapshotArgs("Durable.loadSnapshot", a)
			if err != nil {
				return nil, err
			}
			return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
				m, found, err := durable.LoadSnapshot(ctx, stores.For(d), id, cd)
				if err != nil {
					return nil, err
				}
				if !found {
					return value.Nothing, nil
				}
				return value.Just(m), nil
			})}, nil
		}},
		{Name: "Durable_saveSnapshotAuto", Arity: 4, Fn: func(a []value.Value) (value.Value, error) {
			d, id, cd, err := snapshotArgs("Durable.saveSnapshotAuto", a)
			if err != nil {
				return nil, err
			}
			model := a[3]
			// The ticket is taken now, when update makes the Task, so
			// saves land in the order of the updates that asked for them.
			st := stores.For(d)
			ticket := st.Ticket()
			return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
				if err := durable.SaveSnapshotAutoInOrder(ctx, st, id, ticket, cd, model); err != nil {
					return nil, err
				}
				return value.Unit{}, nil
			})}, nil
		}},
	}
}

// snapshotArgs reads the Db, id and Codec arguments of the snapshot kernels.
func snapshotArgs(fn string, a []value.Value) (*db.DB, string, skycodec.Codec, error) {
	d, err := skydb.FromValue(a[0])
	if err != nil {
		return nil, "", skycodec.Codec{}, value.BadArg(fn, "a Db", a[0])
	}
	id, ok := a[1].(string)
	if !ok {
		return nil, "", skycodec.Codec{}, value.BadArg(fn, "a String snapshot id", a[1])
	}
	cd, err := skycodec.FromValue(a[2])
	if err != nil {
		return nil, "", skycodec.Codec{}, value.BadArg(fn, "a Codec", a[2])
	}
	return d, id, cd, nil
}
