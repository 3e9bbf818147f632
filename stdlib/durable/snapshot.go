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

// SnapshotKernels returns the Sky kernels of Durable.saveSnapshot,
// Durable.loadSnapshot and (real Sky's) Durable.saveSnapshotSeq, which
// writes only when its sequence number is newer and says whether it did:
//
//	saveSnapshot : Db -> String -> Codec a -> a -> Task Error ()
//	saveSnapshot = Ffi.kernel "Durable_saveSnapshot"
//	loadSnapshot : Db -> String -> Codec a -> Task Error (Maybe a)
//	loadSnapshot = Ffi.kernel "Durable_loadSnapshot"
//	saveSnapshotSeq : Db -> String -> Int -> Codec a -> a -> Task Error Bool
//	saveSnapshotSeq = Ffi.kernel "Durable_saveSnapshotSeq"
func SnapshotKernels() []value.Kernel {
	stores := durable.NewSnapshotStores()
	return []value.Kernel{
		{Name: "Durable_saveSnapshot", Arity: 4, Fn: func(a []value.Value) (value.Value, error) {
			d, id, cd, err := snapshotArgs("Durable.saveSnapshot", a)
			if err != nil {
				return nil, err
			}
			model := a[3]
			return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
				if err := durable.SaveSnapshot(ctx, stores.For(d), id, cd, model); err != nil {
					return nil, err
				}
				return value.Unit{}, nil
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
		{Name: "Durable_saveSnapshotSeq", Arity: 5, Fn: func(a []value.Value) (value.Value, error) {
			d, id, cd, err := snapshotArgs("Durable.saveSnapshotSeq", []value.Value{a[0], a[1], a[3]})
			if err != nil {
				return nil, err
			}
			seq, ok := a[2].(int64)
			if !ok || seq < 1 {
				return nil, value.BadArg("Durable.saveSnapshotSeq", "a sequence number of 1 or more (Int)", a[2])
			}
			model := a[4]
			return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
				wrote, err := durable.SaveSnapshotSeq(ctx, stores.For(d), id, seq, cd, model)
				if err != nil {
					return nil, err
				}
				return wrote, nil
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
