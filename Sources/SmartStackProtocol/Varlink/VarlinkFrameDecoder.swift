/// Why a connection's byte stream cannot be read as Varlink messages; the server closes that connection.
public enum VarlinkFramingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// More than `limit` bytes arrived without a terminating NUL, or one message is longer than `limit`.
    case frameTooLarge(limit: Int)
    /// A message that is not a Varlink call: not JSON, not an object, or without a valid `method`.
    case malformed(String)

    public var description: String {
        switch self {
        case .frameTooLarge(let limit): "message larger than \(limit) bytes"
        case .malformed(let reason): "malformed message: \(reason)"
        }
    }
}

/// Splits a Varlink byte stream into messages: JSON texts each terminated by a NUL byte.
///
/// Feed it whatever the socket delivered with `append(_:)`, then call `next()` until it returns `nil`. Bytes
/// already searched are not searched again, and consumed bytes are dropped in bulk, so a message split over
/// many reads costs linear time. A message longer than `maxFrameSize` (its NUL not counted) is an error as soon
/// as it is known, without buffering more; once that happened every later `next()` throws it again.
public struct VarlinkFrameDecoder: Sendable {
    /// The longest message accepted, in bytes, without its NUL.
    public let maxFrameSize: Int

    private var buffer: [UInt8] = []
    /// Where the next message starts.
    private var start = 0
    /// Bytes before this index (and from `start`) contain no NUL.
    private var scanned = 0
    private var failed = false

    /// The service's default limit: 1 MiB.
    public static let defaultMaxFrameSize = 1 << 20

    public init(maxFrameSize: Int = VarlinkFrameDecoder.defaultMaxFrameSize) {
        self.maxFrameSize = max(0, maxFrameSize)
    }

    /// Bytes received and not yet returned as messages.
    public var bufferedByteCount: Int { buffer.count - start }

    /// Adds received bytes.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        if start > 0, start >= buffer.count / 2 {
            // Drop what was consumed before growing; amortised, each byte moves at most once per halving.
            buffer.removeSubrange(0..<start)
            scanned -= start
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete message without its NUL, or `nil` until more bytes arrive.
    public mutating func next() throws(VarlinkFramingError) -> [UInt8]? {
        guard !failed else { throw .frameTooLarge(limit: maxFrameSize) }
        let terminator: Int? = buffer.withUnsafeBufferPointer { bytes in
            var index = scanned
            while index < bytes.count {
                if bytes[index] == 0 { return index }
                index += 1
            }
            return nil
        }
        guard let terminator else {
            scanned = buffer.count
            if buffer.count - start > maxFrameSize {
                failed = true
                throw .frameTooLarge(limit: maxFrameSize)
            }
            return nil
        }
        guard terminator - start <= maxFrameSize else {
            failed = true
            throw .frameTooLarge(limit: maxFrameSize)
        }
        let frame = Array(buffer[start..<terminator])
        start = terminator + 1
        scanned = start
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
            scanned = 0
        }
        return frame
    }
}
