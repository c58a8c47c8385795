/// The engine's whole state as bytes, so a restart need not replay the history (see docs/storage.md).
extension Engine {
    /// The layout version of ``snapshot()``; a snapshot of another version is not read (the history is replayed).
    public static let snapshotFormat: UInt64 = 0

    /// The engine's state as bytes. Placeholder until the state codec lands: empty, so restarts replay.
    public func snapshot() -> [UInt8] { [] }

    /// The engine a snapshot holds, under `settings`.
    public init(snapshot bytes: [UInt8], settings: EngineSettings) throws(CodecError) {
        throw CodecError("engine snapshots of format \(Self.snapshotFormat) are not readable yet")
    }
}
