/// The engine's whole state as bytes, so a restart need not replay the history (see docs/storage.md).
///
/// Layout: the magic `SSES`, ``snapshotFormat``, the settings the state was built under, then every stored
/// field of the engine in declaration order (indexes that follow from other fields, such as `keyIndex` and
/// `keysByApp`, are rebuilt instead of stored). Doubles are stored by bit pattern and dictionaries in key order,
/// so a restored engine decides exactly as the one that was saved. Any change to the engine's stored state
/// must bump ``snapshotFormat``; a snapshot of another format or of other settings is refused with a
/// `CodecError`, and the service replays its log instead.
extension Engine {
    /// The layout version of ``snapshot()``.
    public static let snapshotFormat: UInt64 = 13
    private static let magic: [UInt8] = Array("SSES".utf8)

    /// The engine's state as bytes.
    public func snapshot() -> [UInt8] {
        var writer = ByteWriter(capacity: 4_096 + keys.count * 1_024 + stacks.count * 512)
        for byte in Self.magic { writer.byte(byte) }
        writer.uint(Self.snapshotFormat)
        writer.settings(settings)
        writer.timestamp(now)
        writer.count(kinds.count)
        for id in kinds.keys.sorted() { kinds[id].map { writer.widgetKind($0) } }
        writer.count(kindsByApp.count)
        for app in kindsByApp.keys.sorted() {
            writer.app(app)
            writer.array(kindsByApp[app] ?? []) { $0.kindID($1) }
        }
        writer.count(stacks.count)
        for id in stacks.keys.sorted() { stacks[id].map { writer.stackState($0) } }
        writer.instanceStore(instances)
        writer.usageModel(usage)
        writer.array(keys) { writer, info in
            writer.kindID(info.kind)
            writer.configurationValues(info.configuration.values)
            writer.count(info.placed)
        }
        writer.count(appIndex.count)
        for app in appIndex.keys.sorted() {
            writer.app(app)
            writer.int(Int64(appIndex[app] ?? 0))
        }
        writer.strings(contexts)
        writer.count(contextTimes.count)
        for key in contextTimes.keys.sorted() {
            writer.string(key)
            contextTimes[key].map { writer.timestamp($0) }
        }
        writer.count(contextPairIndex.count)
        for pair in contextPairIndex.keys.sorted() {
            writer.string(pair)
            writer.int(Int64(contextPairIndex[pair] ?? 0))
        }
        writer.array(contextPairs) { $0.int(Int64($1)) }
        writer.liveActivities(liveActivities)
        writer.count(keyTimelines.count)
        for key in keyTimelines.keys.sorted() {
            writer.int(Int64(key))
            keyTimelines[key].map { writer.timeline($0) }
        }
        writer.count(keyRelevance.count)
        for key in keyRelevance.keys.sorted() {
            writer.int(Int64(key))
            keyRelevance[key].map { writer.relevanceDeclaration($0) }
        }
        writer.timers(timers)
        writer.array(pendingLooks.sorted()) { $0.stack($1) }
        writer.array(suggestionCandidates) { $0.int(Int64($1)) }
        writer.int(Int64(generation))
        writer.int(Int64(revisionFloor))
        return writer.bytes
    }

    /// The engine a snapshot holds. Refused (a `CodecError` saying why) when the bytes are damaged, of another
    /// format, or were taken under other `settings` (the state would not be the one these settings build).
    public init(snapshot bytes: [UInt8], settings: EngineSettings) throws(CodecError) {
        var outcome = Result<Engine, CodecError>.failure(CodecError("empty snapshot"))
        bytes.withUnsafeBytes { buffer in
            do throws(CodecError) {
                var reader = ByteReader(buffer)
                outcome = .success(try Engine(reading: &reader, settings: settings))
            } catch {
                outcome = .failure(error)
            }
        }
        self = try outcome.get()
    }

    private init(reading reader: inout ByteReader, settings: EngineSettings) throws(CodecError) {
        for byte in Self.magic where try reader.byte() != byte { throw CodecError("not an engine snapshot") }
        let format = try reader.uint()
        guard format == Self.snapshotFormat else {
            throw CodecError("snapshot format \(format); this build reads format \(Self.snapshotFormat)")
        }
        let stored = try reader.settings()
        guard stored == settings else { throw CodecError("taken under other engine settings") }
        self.init(settings: settings, now: try reader.timestamp())
        for _ in 0..<(try reader.count()) {
            let kind = try reader.widgetKind()
            kinds[kind.id] = kind
        }
        for _ in 0..<(try reader.count()) {
            let app = try reader.app()
            kindsByApp[app] = try reader.array { reader throws(CodecError) in try reader.kindID() }
        }
        for _ in 0..<(try reader.count()) {
            let state = try reader.stackState()
            stacks[state.configuration.id] = state
        }
        instances = try reader.instanceStore()
        usage = try reader.usageModel()
        for index in 0..<(try reader.count()) {
            let kind = try reader.kindID()
            let configuration = Configuration(try reader.configurationValues())
            let placed = try reader.count()
            keys.append(WidgetKeyInfo(kind: kind, configuration: configuration, placed: placed))
            // Rebuilt as `widgetKey(kind:configuration:)` built them.
            keyIndex[WidgetKey(kind: kind, configuration: configuration.canonicalKey)] = Int32(index)
            keysByApp[kind.app, default: []].append(Int32(index))
        }
        for _ in 0..<(try reader.count()) {
            let app = try reader.app()
            appIndex[app] = try reader.int32()
        }
        contexts = try reader.strings()
        for _ in 0..<(try reader.count()) {
            let key = try reader.string()
            contextTimes[key] = try reader.timestamp()
        }
        for _ in 0..<(try reader.count()) {
            let pair = try reader.string()
            contextPairIndex[pair] = try reader.int32()
        }
        contextPairs = try reader.array { reader throws(CodecError) in try reader.int32() }
        liveActivities = try reader.liveActivities()
        for _ in 0..<(try reader.count()) {
            let key = try reader.int32()
            keyTimelines[key] = try reader.timeline()
        }
        for _ in 0..<(try reader.count()) {
            let key = try reader.int32()
            keyRelevance[key] = try reader.relevanceDeclaration()
        }
        timers = try reader.timers()
        for _ in 0..<(try reader.count()) { pendingLooks.insert(try reader.stack()) }
        suggestionCandidates = try reader.array { reader throws(CodecError) in try reader.int32() }
        generation = try reader.integer()
        revisionFloor = try reader.integer()
        try reader.expectEnd()
    }
}

extension ByteWriter {
    mutating func settings(_ value: EngineSettings) {
        for number in [
            value.maxStacks, value.maxWidgetsPerStack, value.maxKinds, value.maxContexts, value.maxTimelineEntries,
            value.reloadBudget, value.maxRotationsPerWidgetPerDay, value.maxSuggestionCandidates,
            value.maxLiveActivitiesPerApp, value.maxRelevantContexts, value.maxUnplacedConfigurationsPerApp,
            value.maxContextPairs, value.maxKindsPerApp,
        ] {
            int(Int64(number))
        }
        for seconds in [
            value.swipeGracePeriod, value.minimumTimeOnTop, value.retention, value.lookOutcomeWindow,
        ] {
            double(seconds)
        }
    }

    mutating func stackState(_ value: StackState) {
        stackConfiguration(value.configuration)
        array(value.instances) { $0.instance($1) }
        array(value.kinds) { $0.kindID($1) }
        array(value.slots) { $0.int(Int64($1)) }
        array(value.keys) { $0.int(Int64($1)) }
        ranker(value.ranker)
        rankerSelector(value.selector)
        optional(value.look) { writer, look in
            writer.timestamp(look.time)
            writer.array(look.keys) { $0.int(Int64($1)) }
            writer.array(look.matrix) { $0.double($1) }
            writer.optional(look.lastApp) { $0.int(Int64($1)) }
            writer.array(look.contexts) { $0.lookContext($1) }
            writer.array(look.fallbackPlaces) { $0.int(Int64($1)) }
        }
        optional(value.previousLookTarget) { $0.int(Int64($1)) }
        optional(value.seenTop) { $0.string($1) }
        optional(value.labelledTops) { writer, tops in
            writer.string(tops.seen)
            writer.int(Int64(tops.mru))
        }
        double(value.holdExtra)
        int(Int64(value.revision))
        optional(value.published) { $0.decision($1) }
        optional(value.sent) { $0.decision($1) }
        optional(value.topSince) { $0.timestamp($1) }
        bool(value.publishedTopWithheld)
        optional(value.lastRotation) { $0.timestamp($1) }
        optional(value.stableSince) { $0.timestamp($1) }
        optional(value.earlier) { writer, earlier in
            writer.optional(earlier.since) { $0.timestamp($1) }
            writer.optional(earlier.top) { $0.string($1) }
            writer.bool(earlier.topWithheld)
            writer.optional(earlier.lastRotation) { $0.timestamp($1) }
            writer.int(Int64(earlier.revision))
        }
        optional(value.manualSwipe) { writer, swipe in
            writer.instance(swipe.instance)
            writer.timestamp(swipe.time)
        }
        array(value.dismissedSuggestions) { writer, dismissed in
            writer.int(Int64(dismissed.key))
            writer.timestamp(dismissed.until)
        }
        bool(value.dirty)
        int(Int64(value.decidedGeneration))
    }

    /// The instance store slot by slot (slot numbers are kept: stacks refer to them), and its free slots in order.
    mutating func instanceStore(_ value: InstanceStore) {
        array(value.slots) { writer, slot in writer.optional(slot) { $0.instanceState($1) } }
        array(value.freeSlots) { $0.int(Int64($1)) }
    }

    mutating func instanceState(_ value: InstanceState) {
        instance(value.id)
        stack(value.stack)
        kindID(value.kind)
        configurationValues(value.configuration.values)
        int(Int64(value.key))
        optional(value.relevance.timeline) { $0.timeline($1) }
        double(value.relevance.historicalMax)
        reloadScheduler(value.reload)
        array(value.relevantContexts) { $0.relevantContext($1) }
        optional(value.group) { $0.string($1) }
        array(value.rotations) { $0.timestamp($1) }
        double(value.engagement.taps)
        double(value.engagement.ignored)
        optional(value.engagement.updated) { $0.timestamp($1) }
        optional(value.engagement.demotedUntil) { $0.timestamp($1) }
    }
}

extension ByteReader {
    mutating func settings() throws(CodecError) -> EngineSettings {
        var value = EngineSettings()
        value.maxStacks = try integer()
        value.maxWidgetsPerStack = try integer()
        value.maxKinds = try integer()
        value.maxContexts = try integer()
        value.maxTimelineEntries = try integer()
        value.reloadBudget = try integer()
        value.maxRotationsPerWidgetPerDay = try integer()
        value.maxSuggestionCandidates = try integer()
        value.maxLiveActivitiesPerApp = try integer()
        value.maxRelevantContexts = try integer()
        value.maxUnplacedConfigurationsPerApp = try integer()
        value.maxContextPairs = try integer()
        value.maxKindsPerApp = try integer()
        value.swipeGracePeriod = try double()
        value.minimumTimeOnTop = try double()
        value.retention = try double()
        value.lookOutcomeWindow = try double()
        return value
    }

    mutating func stackState() throws(CodecError) -> StackState {
        var state = StackState(configuration: try stackConfiguration())
        state.instances = try array { reader throws(CodecError) in try reader.instance() }
        state.kinds = try array { reader throws(CodecError) in try reader.kindID() }
        state.slots = try array { reader throws(CodecError) in try reader.int32() }
        state.keys = try array { reader throws(CodecError) in try reader.int32() }
        state.ranker = try ranker()
        state.selector = try rankerSelector()
        if try present() {
            let time = try timestamp()
            let keys = try array { reader throws(CodecError) in try reader.int32() }
            let matrix = try array { reader throws(CodecError) in try reader.double() }
            let lastApp = try present() ? try int32() : nil
            let contexts = try array { reader throws(CodecError) in try reader.lookContext() }
            let places = try array { reader throws(CodecError) in
                let raw = try reader.int()
                guard let place = Int8(exactly: raw) else { throw CodecError("ranker place \(raw) out of range") }
                return place
            }
            state.look = PendingLook(
                time: time, keys: keys, matrix: matrix, lastApp: lastApp, contexts: contexts, fallbackPlaces: places)
        }
        state.previousLookTarget = try present() ? try int32() : nil
        state.seenTop = try present() ? try string() : nil
        if try present() { state.labelledTops = LabelledTops(seen: try string(), mru: try int32()) }
        state.holdExtra = try double()
        state.revision = try integer()
        state.published = try present() ? try decision() : nil
        state.sent = try present() ? try decision() : nil
        state.topSince = try optionalTimestamp()
        state.publishedTopWithheld = try bool()
        state.lastRotation = try optionalTimestamp()
        state.stableSince = try optionalTimestamp()
        if try present() {
            state.earlier = EarlierStability(
                since: try optionalTimestamp(), top: try present() ? try string() : nil, topWithheld: try bool(),
                lastRotation: try optionalTimestamp(), revision: try integer())
        }
        if try present() { state.manualSwipe = ManualSwipe(instance: try instance(), time: try timestamp()) }
        state.dismissedSuggestions = try array { reader throws(CodecError) in
            DismissedSuggestion(key: try reader.int32(), until: try reader.timestamp())
        }
        state.dirty = try bool()
        state.decidedGeneration = try integer()
        return state
    }

    mutating func instanceStore() throws(CodecError) -> InstanceStore {
        var store = InstanceStore()
        let count = try count()
        let room = capacity(for: count, of: InstanceState?.self)
        store.slots.reserveCapacity(room)
        store.hasRelevanceInputs.reserveCapacity(room)
        store.slotsByID.reserveCapacity(room)
        for _ in 0..<count {
            let state = try present() ? try instanceState() : nil
            if let state { store.slotsByID[state.id] = Int32(store.slots.count) }
            // As `InstanceStore.noteRelevanceInputs` computes it.
            store.hasRelevanceInputs.append(
                state.map { $0.relevance.timeline != nil || !$0.relevantContexts.isEmpty } ?? false)
            store.slots.append(state)
        }
        store.freeSlots = try array { reader throws(CodecError) in try reader.int32() }
        return store
    }

    mutating func instanceState() throws(CodecError) -> InstanceState {
        let id = try instance()
        let stack = try stack()
        let kind = try kindID()
        let configuration = Configuration(try configurationValues())
        let key = try int32()
        let timeline = try present() ? try timeline() : nil
        let historicalMax = try double()
        var state = InstanceState(
            id: id, stack: stack, kind: kind, configuration: configuration, key: key, reload: try reloadScheduler())
        // The tracker's tables follow from its timeline, as when it was installed.
        state.relevance =
            timeline.map { RelevanceTracker(timeline: $0, historicalMax: historicalMax) }
            ?? RelevanceTracker(historicalMax: historicalMax)
        state.relevantContexts = try array { reader throws(CodecError) in try reader.relevantContext() }
        state.group = try optionalString()
        state.rotations = try array { reader throws(CodecError) in try reader.timestamp() }
        // Decayed counts of taps and ignored impressions: never negative (a negative count of taps made the
        // engagement factor the log of a negative number, NaN, in every decision of the stack after).
        let taps = try double(), ignored = try double()
        guard taps >= 0, ignored >= 0 else {
            throw CodecError("engagement of instance \(id.rawValue): taps \(taps), ignored \(ignored), not counts")
        }
        state.engagement = WidgetEngagement(
            taps: taps, ignored: ignored, updated: try optionalTimestamp(), demotedUntil: try optionalTimestamp())
        return state
    }
}
