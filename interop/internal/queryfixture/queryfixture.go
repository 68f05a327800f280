// Package queryfixture is the behaviour both QueryF servers of the interop tests implement
// (TarsGo's, built on TarsGo's generated queryf package, and tarscomm's, built on the code
// tars2tarscomm generates from protocol/tars/QueryF.tars), so that a client of either can check
// every value it gets back. Endpoints are derived from the servant id: deterministic, with
// every field set or zero depending on the id, and the id "empty" has no endpoints at all
// (out parameters must still be written).
package queryfixture

import (
	"hash/fnv"
	"strconv"
)

// Endpoint has the fields of endpointf::EndpointF, independently of either generated type.
type Endpoint struct {
	Host                                       string
	Port, Timeout, Istcp, Grid                 int32
	Groupworkid, Grouprealid                   int32
	SetId                                      string
	Qos, BakFlag, Weight, WeightType, AuthType int32
}

// Active and Inactive are the endpoints the servers return for a key (the servant id, with
// the station or set appended by the functions that take one).
func Active(key string) []Endpoint   { return endpoints(key + "#active") }
func Inactive(key string) []Endpoint { return endpoints(key + "#inactive") }

// Answers of the functions with a return value besides findObjectById (which has none).
func Ret(fn, key string) int32 {
	h := fnv.New32a()
	h.Write([]byte(fn + "/" + key))
	return int32(h.Sum32()%1000) - 500
}

// StationKey and SetKey are the keys of findObjectByIdInSameStation and
// findObjectByIdInSameSet.
func StationKey(id, station string) string { return id + "/station/" + station }
func SetKey(id, set string) string         { return id + "/set/" + set }

func endpoints(key string) []Endpoint {
	if len(key) >= 5 && key[:5] == "empty" {
		return nil
	}
	h := fnv.New64a()
	h.Write([]byte(key))
	s := h.Sum64()
	next := func(mod uint64) int32 {
		s = s*6364136223846793005 + 1442695040888963407
		if (s>>33)%3 == 0 {
			return 0 // zero often, so that optional fields are left out
		}
		return int32((s >> 35) % mod)
	}
	n := 1 + int(next(4))
	out := make([]Endpoint, n)
	for i := range out {
		out[i] = Endpoint{
			Host:        "10.0." + strconv.Itoa(int(next(255))) + "." + strconv.Itoa(i),
			Port:        next(65535),
			Timeout:     next(1 << 20),
			Istcp:       next(2),
			Grid:        next(5),
			Groupworkid: next(1 << 30), Grouprealid: -next(1 << 30),
			Qos: next(64), BakFlag: next(2), Weight: next(100), WeightType: next(3), AuthType: next(2),
		}
		if next(2) == 1 {
			out[i].SetId = "set.area." + strconv.Itoa(i)
		}
	}
	return out
}
