// Package carry holds what a call made with a context carries on from it, besides its deadline:
// the dyeing key (package dye) and the cookies (package cookie) of the request a server handler
// serves. Both live in one context value, so that a call looks the context up once to learn that
// it carries neither (a lookup through context.WithoutCancel allocates).
package carry
