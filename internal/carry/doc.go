// Package carry holds what a call made with a context carries on from it, besides its deadline:
// the dyeing key (package dye), the cookies (package cookie) and the trace id (package tracekey)
// of the request a server handler serves. They live in one context value, so that a call looks
// the context up once to learn that it carries none (a lookup through context.WithoutCancel
// allocates).
package carry
