// Package conf holds the TOML configuration of a Communicator and of the project's server: plain
// structs with toml tags, Default, Load/Parse and Validate. It sits just above the leaves (the
// standard library, github.com/BurntSushi/toml, and package endpoint for the set-division rule):
// communicator reads a Config and hands plain values down, and
// server/serverconf builds servers from its [server] table, so no engine package imports conf.
//
// Keys are TARS's where TARS has them ("netthread", "sync-invoke-timeout", ...), every key is
// optional with a documented default, durations are strings with a unit ("3s"), and both unknown
// keys and bad values are errors naming the key, as is a key that would do nothing where it is
// (retry-budget without retries, backup-budget or idempotent without backup-request,
// endpoint-cache without the registry, backpacketmin with the rule off, [server]'s TLS keys
// with no ssl adapter). testdata/full.toml lists every key with its default and range; it is
// the reference for users.
//
// A Config is a value: Load and Parse return a fresh one, and nothing in this package keeps or
// shares state, so any goroutine may call anything here. A Config being read by several goroutines
// must not be changed meanwhile. A plain copy shares its servant table, their idempotent lists
// and the server's adapters with the original; Clone returns one that shares nothing (the
// Communicator keeps such a copy of the Config it was made with).
//
// # Example
//
//	cfg, err := conf.Load("client.toml") // or conf.Default()
//	if err != nil {
//		return err // e.g. "client.toml: conf: netthread = 0: must be between 1 and 64"
//	}
//	s := cfg.ForServant("Hello.Server.GreeterObj") // timeouts and balancer with overrides applied
package conf
