#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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

    // Inlinable (with its state usable from inline code): the connection's calls to `append` and `nextFrame` are
    // then specialized in the server, without generic metadata looked up per call.
    @usableFromInline var buffer: [UInt8] = []
    /// Where the next message starts.
    @usableFromInline var start = 0
    /// Bytes before this index (and from `start`) contain no NUL.
    @usableFromInline var scanned = 0
    @usableFromInline var failed = false

    /// The most buffer capacity kept while nothing is buffered.
    @usableFromInline static let keptCapacity = 64 << 10

    /// The service's default limit: 1 MiB.
    public static let defaultMaxFrameSize = 1 << 20

    public init(maxFrameSize: Int = VarlinkFrameDecoder.defaultMaxFrameSize) {
        self.maxFrameSize = max(0, maxFrameSize)
    }

    /// Bytes received and not yet returned as messages.
    public var bufferedByteCount: Int { buffer.count - start }

    /// Bytes of memory the decoder holds for them (its buffer's capacity, which grows ahead of its content):
    /// what a memory budget counts. 0 once nothing is buffered.
    public var heldBytes: Int { buffer.isEmpty ? 0 : buffer.capacity }

    /// The index of the first NUL in `base[from..<count]`, found with `memchr`.
    @usableFromInline
    static func nul(in base: UnsafePointer<UInt8>, from: Int, count: Int) -> Int? {
        guard let found = memchr(base + from, 0, count - from) else { return nil }
        return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
    }

    /// Adds received bytes.
    @inlinable
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
        try nextFrame { Result.success(Array($0)) }
    }

    /// Hands the next complete message (without its NUL) to `body` where it lies in the buffer, without copying
    /// it; `nil` until more bytes arrive. The bytes are valid only during `body`.
    @inlinable
    public mutating func nextFrame<Decoded>(
        _ body: (UnsafeBufferPointer<UInt8>) -> Result<Decoded, VarlinkFramingError>
    ) throws(VarlinkFramingError) -> Decoded? {
        guard !failed else { throw .frameTooLarge(limit: maxFrameSize) }
        let terminator: Int? = buffer.withUnsafeBufferPointer { bytes in
            // memchr: a flood of unfinished input is scanned at memory speed, in every build.
            guard let base = bytes.baseAddress, scanned < bytes.count else { return nil }
            return Self.nul(in: base, from: scanned, count: bytes.count)
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
        let first = start
        let decoded = buffer.withUnsafeBufferPointer { bytes in
            body(UnsafeBufferPointer(rebasing: bytes[first..<terminator]))
        }
        start = terminator + 1
        scanned = start
        if start == buffer.count {
            // Keep a small buffer for the next message; give a large one back (an idle connection that once sent
            // a big message would otherwise hold its memory).
            if buffer.capacity > Self.keptCapacity { buffer = [] } else { buffer.removeAll(keepingCapacity: true) }
            start = 0
            scanned = 0
        }
        return try decoded.get()
    }
}
