package meshstate

import "encoding/json"

// Codec turns a handle's values into the JSON the wire carries and back. JSONCodec is the default; a
// codec may also check values (return an error to refuse one: nothing is sent, or the read fails as
// invalid-stored-value).
type Codec[T any] interface {
	Encode(value T) (json.RawMessage, error)
	Decode(data json.RawMessage) (T, error)
}

// JSONCodec is encoding/json both ways.
type JSONCodec[T any] struct{}

// Encode implements Codec.
func (JSONCodec[T]) Encode(value T) (json.RawMessage, error) { return json.Marshal(value) }

// Decode implements Codec.
func (JSONCodec[T]) Decode(data json.RawMessage) (T, error) {
	var value T
	err := json.Unmarshal(data, &value)
	return value, err
}

// Option configures a handle.
type Option[T any] func(*handleOptions[T])

type handleOptions[T any] struct {
	codec Codec[T]
}

// WithCodec replaces the JSON codec of a handle.
func WithCodec[T any](codec Codec[T]) Option[T] {
	return func(options *handleOptions[T]) { options.codec = codec }
}
