package meshstate

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Reason is a refusal's stable reason, as state-protocol's table names it. Match on it, never on a message.
type Reason string

// The reasons of state-protocol's error table, and limit (issue 19). Only ReasonUnavailable leaves a
// write's outcome unknown; every other refusal did nothing.
const (
	// ReasonBadRequest: the params do not fit the verb (Path names the field).
	ReasonBadRequest Reason = "bad-request"
	// ReasonNotIssued: the module's manifest does not declare the bucket, or it is not issued to this machine.
	ReasonNotIssued Reason = "not-issued"
	// ReasonReadOnly: a write to a bucket the module only reads.
	ReasonReadOnly Reason = "read-only"
	// ReasonBadKey: the key or filter breaks the key rules (CheckKey, CheckFilter).
	ReasonBadKey Reason = "bad-key"
	// ReasonTooLarge: the encoded value is over MaxValueBytes or the bucket's own cap.
	ReasonTooLarge Reason = "too-large"
	// ReasonSecretField: the value carries a credential (FindSecret); Path and Kind say where and what.
	ReasonSecretField Reason = "secret-field"
	// ReasonConflict: IfRevision did not match; Revision is the key's current one (0: absent).
	ReasonConflict Reason = "conflict"
	// ReasonBucketFull: the bucket reached its size or value count.
	ReasonBucketFull Reason = "bucket-full"
	// ReasonDenied: the server refused the machine's credentials for this operation.
	ReasonDenied Reason = "denied"
	// ReasonUnavailable: NATS did not answer in time; a write may or may not have happened.
	ReasonUnavailable Reason = "unavailable"
	// ReasonUnknownWatch: unwatch (or a batch) named a watch that is not open.
	ReasonUnknownWatch Reason = "unknown-watch"
	// ReasonLimit: a per-bundle limit of the runtime; Limit names which (watches, in-flight, line-size).
	ReasonLimit Reason = "limit"
)

// reasonCodes is the JSON-RPC code of each reason; the conformance fixtures hold it to state-protocol's.
var reasonCodes = map[Reason]int{
	ReasonBadRequest:   -32602,
	ReasonNotIssued:    -32010,
	ReasonReadOnly:     -32011,
	ReasonBadKey:       -32012,
	ReasonTooLarge:     -32013,
	ReasonSecretField:  -32014,
	ReasonConflict:     -32020,
	ReasonBucketFull:   -32021,
	ReasonDenied:       -32030,
	ReasonUnavailable:  -32031,
	ReasonUnknownWatch: -32040,
	ReasonLimit:        -32050,
}

// code is the JSON-RPC error code of the reason, 0 for an unknown one.
func (r Reason) code() int { return reasonCodes[r] }

func reasonOfCode(code int) (Reason, bool) {
	for reason, known := range reasonCodes {
		if known == code {
			return reason, true
		}
	}
	return "", false
}

// StateError is a refusal: the runtime's (rebuilt from its JSON-RPC error), or the same check made
// early in this process (the key rules, the secret rule). The verb did nothing, except with
// ReasonUnavailable, where a write's outcome is unknown.
//
//	var refused *meshstate.StateError
//	if errors.As(err, &refused) && refused.Reason == meshstate.ReasonConflict { … }
type StateError struct {
	Reason  Reason
	Code    int
	Message string
	// Path: data.path, the offending field (secret-field, bad-request).
	Path string
	// Kind: data.kind with secret-field: what was recognised (field-name, pem-private-key, jwt, …).
	Kind string
	// Revision: data.revision with conflict, the key's current revision (0: absent).
	Revision uint64
	// Limit: data.limit with limit: watches, in-flight or line-size.
	Limit string
	// Data is the error's whole data object, as sent.
	Data   map[string]any
	Bucket string
	Key    string
}

func (e *StateError) Error() string {
	return fmt.Sprintf("%s (%s)", e.Message, e.Reason)
}

// Is lets errors.Is(err, &StateError{Reason: ReasonConflict}) match by reason.
func (e *StateError) Is(target error) bool {
	var other *StateError
	if !errors.As(target, &other) {
		return false
	}
	return other.Reason == e.Reason && other.Message == ""
}

func newStateError(reason Reason, message, bucket, key string) *StateError {
	return &StateError{Reason: reason, Code: reason.code(), Message: message, Bucket: bucket, Key: key, Data: map[string]any{"reason": string(reason)}}
}

// ClientReason is why this process failed a call on its own.
type ClientReason string

const (
	// ClientInvalidValue: the codec could not encode a value; nothing was sent.
	ClientInvalidValue ClientReason = "invalid-value"
	// ClientInvalidStoredValue: a stored value does not decode (Get, Update; an EventInvalid in a watch).
	ClientInvalidStoredValue ClientReason = "invalid-stored-value"
	// ClientClosed: the channel to the runtime is gone.
	ClientClosed ClientReason = "closed"
	// ClientProtocol: the runtime answered outside the state contract.
	ClientProtocol ClientReason = "protocol"
	// ClientWatchEnded: a mirror's watch ended before it was synced or before a condition held.
	ClientWatchEnded ClientReason = "watch-ended"
)

// ClientError is something this process decided without the runtime.
type ClientError struct {
	Reason  ClientReason
	Message string
	Bucket  string
	Key     string
	// Code: the JSON-RPC code, for ClientProtocol.
	Code  int
	Cause error
}

func (e *ClientError) Error() string { return fmt.Sprintf("%s (%s)", e.Message, e.Reason) }
func (e *ClientError) Unwrap() error { return e.Cause }

// RPCError is a JSON-RPC error answer as it arrived on a channel.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// stateErrorFromWire rebuilds a refusal from a JSON-RPC error: the reason from data.reason, else from the
// code. It returns nil when the error is not a state refusal (an internal error, an unknown method).
func stateErrorFromWire(wire *RPCError, bucket, key string) *StateError {
	var data map[string]any
	if len(wire.Data) > 0 {
		_ = json.Unmarshal(wire.Data, &data)
	}
	reason := Reason("")
	if text, ok := data["reason"].(string); ok {
		if _, known := reasonCodes[Reason(text)]; known {
			reason = Reason(text)
		}
	}
	if reason == "" {
		known, ok := reasonOfCode(wire.Code)
		if !ok {
			return nil
		}
		reason = known
	}
	refusal := &StateError{Reason: reason, Code: wire.Code, Message: wire.Message, Data: data, Bucket: bucket, Key: key}
	if path, ok := data["path"].(string); ok {
		refusal.Path = path
	}
	if kind, ok := data["kind"].(string); ok {
		refusal.Kind = kind
	}
	if limit, ok := data["limit"].(string); ok {
		refusal.Limit = limit
	}
	if revision, ok := data["revision"].(float64); ok && revision >= 0 {
		refusal.Revision = uint64(revision)
	}
	return refusal
}
