/// The storage layout of engine events: one case byte, then the case's fields (see ``ByteWriter``).
///
/// Case bytes are part of the stored format and never reused; a new case takes the next number, and a
/// changed layout of an existing case gets a new number too, so every row stays readable.
extension EngineEvent {
    /// Appends the event's bytes to `writer`.
    public func encode(into writer: inout ByteWriter) {
        switch self {
        case .registerKind(let kind, let at):
            writer.byte(1)
            writer.widgetKind(kind)
            writer.timestamp(at)
        case .configureStack(let configuration, let at):
            writer.byte(2)
            writer.stackConfiguration(configuration)
            writer.timestamp(at)
        case .removeStack(let id, let at):
            writer.byte(3)
            writer.stack(id)
            writer.timestamp(at)
        case .donate(let donation):
            writer.byte(4)
            writer.donation(donation)
        case .submitTimeline(let target, let timeline, let at):
            writer.byte(5)
            writer.timelineTarget(target)
            writer.timeline(timeline)
            writer.timestamp(at)
        case .declareRelevance(let declaration, let at):
            writer.byte(6)
            writer.relevanceDeclaration(declaration)
            writer.timestamp(at)
        case .reloadTimelines(let app, let kind, let at):
            writer.byte(7)
            writer.app(app)
            writer.optional(kind) { $0.string($1) }
            writer.timestamp(at)
        case .engage(let stack, let instance, let kind, let duration, let at):
            writer.byte(8)
            writer.stack(stack)
            writer.instance(instance)
            writer.string(kind.rawValue)
            writer.optional(duration) { $0.double($1) }
            writer.timestamp(at)
        case .look(let stack, let at):
            writer.byte(9)
            writer.stack(stack)
            writer.timestamp(at)
        case .setContext(let key, let value, let at):
            writer.byte(10)
            writer.string(key)
            writer.optional(value) { $0.string($1) }
            writer.timestamp(at)
        case .startLiveActivity(let app, let id, let attributes, let contentState, let at):
            writer.byte(11)
            writer.app(app)
            writer.string(id)
            writer.strings(attributes)
            writer.strings(contentState)
            writer.timestamp(at)
        case .updateLiveActivity(let app, let id, let contentState, let at):
            writer.byte(12)
            writer.app(app)
            writer.string(id)
            writer.strings(contentState)
            writer.timestamp(at)
        case .endLiveActivity(let app, let id, let contentState, let dismissAfter, let at):
            writer.byte(13)
            writer.app(app)
            writer.string(id)
            writer.optional(contentState) { $0.strings($1) }
            writer.optional(dismissAfter) { $0.double($1) }
            writer.timestamp(at)
        case .publish(let at):
            writer.byte(14)
            writer.timestamp(at)
        }
    }

    /// The event's bytes.
    public var encoded: [UInt8] {
        var writer = ByteWriter()
        encode(into: &writer)
        return writer.bytes
    }

    /// Reads one event as ``encode(into:)`` wrote it.
    public init(from reader: inout ByteReader) throws(CodecError) {
        switch try reader.byte() {
        case 1: self = .registerKind(try reader.widgetKind(), at: try reader.timestamp())
        case 2: self = .configureStack(try reader.stackConfiguration(), at: try reader.timestamp())
        case 3: self = .removeStack(try reader.stack(), at: try reader.timestamp())
        case 4: self = .donate(try reader.donation())
        case 5:
            self = .submitTimeline(try reader.timelineTarget(), try reader.timeline(), at: try reader.timestamp())
        case 6: self = .declareRelevance(try reader.relevanceDeclaration(), at: try reader.timestamp())
        case 7:
            self = .reloadTimelines(
                app: try reader.app(), kind: try reader.optionalString(), at: try reader.timestamp())
        case 8:
            let stack = try reader.stack()
            let instance = try reader.instance()
            let name = try reader.string()
            guard let kind = EngagementKind(rawValue: name) else { throw CodecError("unknown engagement '\(name)'") }
            self = .engage(
                stack: stack, instance: instance, kind: kind, duration: try reader.optionalDouble(),
                at: try reader.timestamp())
        case 9: self = .look(stack: try reader.stack(), at: try reader.timestamp())
        case 10:
            self = .setContext(key: try reader.string(), value: try reader.optionalString(), at: try reader.timestamp())
        case 11:
            self = .startLiveActivity(
                app: try reader.app(), id: try reader.string(), attributes: try reader.strings(),
                contentState: try reader.strings(), at: try reader.timestamp())
        case 12:
            self = .updateLiveActivity(
                app: try reader.app(), id: try reader.string(), contentState: try reader.strings(),
                at: try reader.timestamp())
        case 13:
            self = .endLiveActivity(
                app: try reader.app(), id: try reader.string(),
                contentState: try reader.present() ? try reader.strings() : nil,
                dismissAfter: try reader.optionalDouble(), at: try reader.timestamp())
        case 14: self = .publish(at: try reader.timestamp())
        case let tag:
            throw CodecError("unknown event case \(tag)")
        }
    }

    /// Reads one event from exactly `bytes`.
    public init(decoding bytes: UnsafeRawBufferPointer) throws(CodecError) {
        var reader = ByteReader(bytes)
        try self.init(from: &reader)
        try reader.expectEnd()
    }

    /// Reads one event from exactly `bytes`, reusing app ids read before (`recentApps`, kept up to date), so
    /// reading a long log builds and checks each app's id once.
    public init(decoding bytes: UnsafeRawBufferPointer, recentApps: inout [AppID]) throws(CodecError) {
        var reader = ByteReader(bytes)
        reader.recentApps = recentApps
        try self.init(from: &reader)
        try reader.expectEnd()
        recentApps = reader.recentApps
    }

    /// Reads one event from exactly `bytes`.
    public init(decoding bytes: [UInt8]) throws(CodecError) {
        var outcome = Result<EngineEvent, CodecError>.failure(CodecError("empty"))
        bytes.withUnsafeBytes { buffer in
            do throws(CodecError) {
                outcome = .success(try EngineEvent(decoding: buffer))
            } catch {
                outcome = .failure(error)
            }
        }
        self = try outcome.get()
    }
}
