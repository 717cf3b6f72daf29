package meshstate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf16"
)

// EventType says what an Event is.
type EventType string

const (
	// EventPut: a value, current when the watch started or written since.
	EventPut EventType = "put"
	// EventDelete: a key deleted (never among the current values).
	EventDelete EventType = "delete"
	// EventInvalid: a stored value the codec cannot decode; it takes the place of a put, the watch goes on.
	EventInvalid EventType = "invalid"
	// EventCurrent: every value that existed when the watch started has been delivered; changes follow.
	EventCurrent EventType = "current"
	// EventEnded: the watch cannot go on (or the channel closed); always the last event.
	EventEnded EventType = "ended"
)

// Event is one event of a watch, or one entry of a history (put, delete, invalid).
type Event[T any] struct {
	Type     EventType
	Key      string
	Value    T
	Revision uint64
	Updated  time.Time
	// Stored is the value as stored, for EventInvalid.
	Stored json.RawMessage
	// Err is the *ClientError (invalid-stored-value) of an EventInvalid.
	Err error
	// EndReason and Message, for EventEnded: closed, unavailable, denied, bucket-missing, internal.
	EndReason string
	Message   string
}

// wireEvent is an event as the wire carries it.
type wireEvent struct {
	Type     string          `json:"type"`
	Key      string          `json:"key"`
	Value    json.RawMessage `json:"value"`
	Revision uint64          `json:"revision"`
	Updated  string          `json:"updated"`
	Reason   string          `json:"reason"`
	Message  string          `json:"message"`
}

var watchEndReasons = map[string]bool{"closed": true, "unavailable": true, "denied": true, "bucket-missing": true, "internal": true}

const maxSafeInteger = 1<<53 - 1

// checkBatch is state-protocol's checkWatchEventsParams verdict: "" when the batch fits the contract.
func checkBatch(watch string, events json.RawMessage) string {
	if units := len(utf16.Encode([]rune(watch))); units < 1 || units > 64 {
		return "watch: expected a string of 1 to 64 characters"
	}
	var list []json.RawMessage
	if json.Unmarshal(events, &list) != nil || len(list) == 0 {
		return "events: expected a non-empty array"
	}
	for index, raw := range list {
		if problem := checkEvent(raw); problem != "" {
			return fmt.Sprintf("events.%d%s", index, problem)
		}
	}
	return ""
}

func checkEvent(raw json.RawMessage) string {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields == nil {
		return ": expected an object"
	}
	var kind string
	_ = json.Unmarshal(fields["type"], &kind)
	switch kind {
	case "put":
		if _, ok := fields["value"]; !ok {
			return ".value: expected a JSON value"
		}
		return entryProblem(fields)
	case "delete":
		return entryProblem(fields)
	case "current":
		return ""
	case "ended":
		var reason, message string
		if json.Unmarshal(fields["reason"], &reason) != nil || !watchEndReasons[reason] {
			return ".reason: expected one of closed, unavailable, denied, bucket-missing, internal"
		}
		if !isJSONString(fields["message"]) || json.Unmarshal(fields["message"], &message) != nil {
			return ".message: expected a string"
		}
		return ""
	}
	return ".type: expected put, delete, current or ended"
}

func isJSONString(raw json.RawMessage) bool {
	return len(raw) > 0 && raw[0] == '"'
}

func entryProblem(fields map[string]json.RawMessage) string {
	if !isJSONString(fields["key"]) {
		return ".key: expected a string"
	}
	var revision float64
	raw := fields["revision"]
	if len(raw) == 0 || json.Unmarshal(raw, &revision) != nil || revision < 0 || revision > maxSafeInteger || revision != float64(int64(revision)) {
		return ".revision: expected a revision"
	}
	if !isJSONString(fields["updated"]) {
		return ".updated: expected a string"
	}
	return ""
}

func parseUpdated(text string) time.Time {
	updated, _ := time.Parse(time.RFC3339Nano, text)
	return updated
}

// decodeEvent turns a wire event into a typed one: a put whose value the codec refuses is EventInvalid.
func decodeEvent[T any](codec Codec[T], bucket string, wire wireEvent) Event[T] {
	event := Event[T]{Type: EventType(wire.Type), Key: wire.Key, Revision: wire.Revision, Updated: parseUpdated(wire.Updated), EndReason: wire.Reason, Message: wire.Message}
	if wire.Type != "put" {
		return event
	}
	value, err := codec.Decode(wire.Value)
	if err != nil {
		event.Type = EventInvalid
		event.Stored = bytes.Clone(wire.Value)
		event.Err = &ClientError{Reason: ClientInvalidStoredValue, Message: fmt.Sprintf("stored value of key %s in bucket %s does not decode: %v", wire.Key, bucket, err), Bucket: bucket, Key: wire.Key, Cause: err}
		return event
	}
	event.Value = value
	return event
}
