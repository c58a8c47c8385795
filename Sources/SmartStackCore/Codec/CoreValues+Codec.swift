// The storage layout of the domain values events carry. Each `write` has a matching `read`; fields go in
// declaration order. Identifiers, kinds and timelines are rebuilt through their checking initialisers, so a damaged
// row of them is a `CodecError`; donations, configuration values and relevant contexts are read as stored (only
// this service writes them, after checking them), so a damaged row of those can load a value the checks refuse.

extension CoreError {
    var codecError: CodecError { CodecError("stored value rejected: \(self)") }
}

extension ByteWriter {
    /// A timestamp: its instant and its UTC offset.
    public mutating func timestamp(_ value: Timestamp) {
        int(value.microseconds)
        int(Int64(value.utcOffsetSeconds))
    }

    mutating func app(_ value: AppID) { string(value.rawValue) }
    mutating func instance(_ value: InstanceID) { string(value.rawValue) }
    mutating func stack(_ value: StackID) { string(value.rawValue) }

    mutating func kindID(_ value: WidgetKindID) {
        app(value.app)
        string(value.kind)
    }

    mutating func configurationValue(_ value: ConfigurationValue) {
        switch value {
        case .string(let text): byte(0); string(text)
        case .bool(let flag): byte(1); bool(flag)
        case .int(let number): byte(2); int(number)
        case .decimal(let number): byte(3); double(number)
        case .enumCase(let id): byte(4); string(id)
        case .entity(let id, let displayName):
            byte(5)
            string(id)
            optional(displayName) { $0.string($1) }
        case .date(let time): byte(6); timestamp(time)
        case .duration(let seconds): byte(7); double(seconds)
        case .url(let text): byte(8); string(text)
        case .measurement(let value, let unit): byte(9); double(value); string(unit)
        case .currency(let amount, let code): byte(10); double(amount); string(code)
        }
    }

    mutating func configurationValues(_ values: [String: ConfigurationValue]) {
        count(values.count)
        for key in values.keys.sorted() {
            string(key)
            if let value = values[key] { configurationValue(value) }
        }
    }

    mutating func donation(_ value: Donation) {
        string(value.id)
        app(value.app)
        string(value.intent)
        strings(value.parameters)
        timestamp(value.date)
        optional(value.groupId) { $0.string($1) }
    }

    mutating func widgetKind(_ value: WidgetKind) {
        kindID(value.id)
        string(value.displayName)
        array(value.families.sorted()) { $0.string($1.rawValue) }
        optional(value.intent) { writer, intent in
            writer.string(intent.type)
            writer.array(intent.parameters) { $0.parameterSchema($1) }
        }
        array(value.predictionMappings) { writer, mapping in
            writer.string(mapping.intentType)
            writer.strings(mapping.parameters)
        }
    }

    mutating func parameterSchema(_ value: ParameterSchema) {
        string(value.name)
        string(value.type.rawValue)
        optional(value.title) { $0.string($1) }
        bool(value.optional)
        optional(value.defaultValue) { $0.configurationValue($1) }
        array(value.cases) { writer, option in
            writer.string(option.id)
            writer.string(option.displayName)
        }
        array(value.suggestedEntities) { writer, option in
            writer.string(option.id)
            writer.string(option.displayName)
        }
    }

    mutating func stackConfiguration(_ value: StackConfiguration) {
        stack(value.id)
        string(value.family.rawValue)
        array(value.widgets) { writer, widget in
            writer.instance(widget.instance)
            writer.kindID(widget.kind)
            writer.configurationValues(widget.configuration)
        }
        bool(value.smartRotate)
        bool(value.suggestions)
        optional(value.pinned) { $0.instance($1) }
        bool(value.developerMode)
        bool(value.liveActivities)
    }

    mutating func timelineTarget(_ value: TimelineTarget) {
        switch value {
        case .instance(let id):
            byte(0)
            instance(id)
        case .configuration(let kind, let values):
            byte(1)
            kindID(kind)
            configurationValues(values)
        }
    }

    mutating func timeline(_ value: Timeline) {
        array(value.entries) { writer, entry in
            writer.timestamp(entry.date)
            writer.optional(entry.relevance) { writer, relevance in
                writer.double(relevance.score)
                writer.double(relevance.duration)
            }
        }
        switch value.policy {
        case .atEnd: byte(0)
        case .after(let date): byte(1); timestamp(date)
        case .never: byte(2)
        }
    }

    mutating func relevantContext(_ value: RelevantContext) {
        switch value {
        case .dateInterval(let start, let end): byte(0); timestamp(start); timestamp(end)
        case .context(let key, let value): byte(1); string(key); string(value)
        }
    }

    mutating func relevanceDeclaration(_ value: RelevanceDeclaration) {
        timelineTarget(value.target)
        array(value.contexts) { $0.relevantContext($1) }
        optional(value.group) { $0.string($1) }
    }
}

extension ByteReader {
    /// A timestamp as ``ByteWriter/timestamp(_:)`` wrote it.
    public mutating func timestamp() throws(CodecError) -> Timestamp {
        Timestamp(microseconds: try int(), utcOffsetSeconds: try int32())
    }

    mutating func optionalString() throws(CodecError) -> String? { try present() ? try string() : nil }
    mutating func optionalTimestamp() throws(CodecError) -> Timestamp? { try present() ? try timestamp() : nil }
    mutating func optionalDouble() throws(CodecError) -> Double? { try present() ? try double() : nil }

    mutating func app() throws(CodecError) -> AppID {
        if let known = try matching(recentApps) { return known }
        let raw = try string()
        let app: AppID
        do { app = try AppID(raw) } catch { throw error.codecError }
        if recentApps.count >= 32 { recentApps.removeFirst() }
        recentApps.append(app)
        return app
    }

    mutating func instance() throws(CodecError) -> InstanceID {
        let raw = try string()
        do { return try InstanceID(raw) } catch { throw error.codecError }
    }

    mutating func stack() throws(CodecError) -> StackID {
        let raw = try string()
        do { return try StackID(raw) } catch { throw error.codecError }
    }

    mutating func kindID() throws(CodecError) -> WidgetKindID {
        let app = try app()
        let kind = try string()
        do { return try WidgetKindID(app: app, kind: kind) } catch { throw error.codecError }
    }

    mutating func family() throws(CodecError) -> WidgetFamily {
        let name = try string()
        guard let family = WidgetFamily(rawValue: name) else { throw CodecError("unknown family '\(name)'") }
        return family
    }

    mutating func configurationValue() throws(CodecError) -> ConfigurationValue {
        switch try byte() {
        case 0: return .string(try string())
        case 1: return .bool(try bool())
        case 2: return .int(try int())
        case 3: return .decimal(try double())
        case 4: return .enumCase(try string())
        case 5: return .entity(id: try string(), displayName: try optionalString())
        case 6: return .date(try timestamp())
        case 7: return .duration(seconds: try double())
        case 8: return .url(try string())
        case 9: return .measurement(value: try double(), unit: try string())
        case 10: return .currency(amount: try double(), code: try string())
        case let tag: throw CodecError("unknown configuration value tag \(tag)")
        }
    }

    mutating func configurationValues() throws(CodecError) -> [String: ConfigurationValue] {
        let count = try count(limit: 1 << 20)
        guard count > 0 else { return [:] }
        var values: [String: ConfigurationValue] = [:]
        values.reserveCapacity(count)
        for _ in 0..<count {
            let key = try string()
            values[key] = try configurationValue()
        }
        return values
    }

    mutating func donation() throws(CodecError) -> Donation {
        Donation(
            id: try string(), app: try app(), intent: try string(), parameters: try strings(), date: try timestamp(),
            groupId: try optionalString())
    }

    mutating func widgetKind() throws(CodecError) -> WidgetKind {
        let id = try kindID()
        let displayName = try string()
        var families: Set<WidgetFamily> = []
        for _ in 0..<(try count(limit: 64)) { families.insert(try family()) }
        var intent: IntentSchema?
        if try present() {
            let type = try string()
            let parameters = try array(limit: 1 << 20) { reader throws(CodecError) in try reader.parameterSchema() }
            do { intent = try IntentSchema(type: type, parameters: parameters) } catch { throw error.codecError }
        }
        let mappings = try array(limit: 1 << 20) { reader throws(CodecError) in
            PredictionMapping(intentType: try reader.string(), parameters: try reader.strings())
        }
        do {
            return try WidgetKind(
                id: id, displayName: displayName, families: families, intent: intent, predictionMappings: mappings)
        } catch {
            throw error.codecError
        }
    }

    mutating func parameterSchema() throws(CodecError) -> ParameterSchema {
        let name = try string()
        let typeName = try string()
        guard let type = ParameterType(rawValue: typeName) else {
            throw CodecError("unknown parameter type '\(typeName)'")
        }
        let title = try optionalString()
        let optional = try bool()
        let defaultValue = try present() ? try configurationValue() : nil
        let cases = try array(limit: 1 << 20) { reader throws(CodecError) in
            EnumCase(id: try reader.string(), displayName: try reader.string())
        }
        let entities = try array(limit: 1 << 20) { reader throws(CodecError) in
            EntityOption(id: try reader.string(), displayName: try reader.string())
        }
        return ParameterSchema(
            name: name, type: type, title: title, optional: optional, defaultValue: defaultValue, cases: cases,
            suggestedEntities: entities)
    }

    mutating func stackConfiguration() throws(CodecError) -> StackConfiguration {
        let id = try stack()
        let family = try family()
        let widgets = try array(limit: 1 << 20) { reader throws(CodecError) in
            WidgetPlacement(
                instance: try reader.instance(), kind: try reader.kindID(),
                configuration: try reader.configurationValues())
        }
        return StackConfiguration(
            id: id, family: family, widgets: widgets, smartRotate: try bool(), suggestions: try bool(),
            pinned: try present() ? try instance() : nil, developerMode: try bool(), liveActivities: try bool())
    }

    mutating func timelineTarget() throws(CodecError) -> TimelineTarget {
        switch try byte() {
        case 0: return .instance(try instance())
        case 1: return .configuration(try kindID(), try configurationValues())
        case let tag: throw CodecError("unknown timeline target tag \(tag)")
        }
    }

    mutating func timeline() throws(CodecError) -> Timeline {
        let entries = try array(limit: 1 << 24) { reader throws(CodecError) in
            let date = try reader.timestamp()
            let relevance =
                try reader.present() ? Relevance(score: try reader.double(), duration: try reader.double()) : nil
            return TimelineEntry(date: date, relevance: relevance)
        }
        let policy: ReloadPolicy
        switch try byte() {
        case 0: policy = .atEnd
        case 1: policy = .after(try timestamp())
        case 2: policy = .never
        case let tag: throw CodecError("unknown reload policy tag \(tag)")
        }
        do {
            return try Timeline.validated(entries: entries, policy: policy, maxEntries: .max).timeline
        } catch {
            throw error.codecError
        }
    }

    mutating func relevantContext() throws(CodecError) -> RelevantContext {
        switch try byte() {
        case 0: return .dateInterval(start: try timestamp(), end: try timestamp())
        case 1: return .context(key: try string(), value: try string())
        case let tag: throw CodecError("unknown relevant context tag \(tag)")
        }
    }

    mutating func relevanceDeclaration() throws(CodecError) -> RelevanceDeclaration {
        let target = try timelineTarget()
        let contexts = try array(limit: 1 << 20) { reader throws(CodecError) in try reader.relevantContext() }
        return RelevanceDeclaration(target: target, contexts: contexts, group: try optionalString())
    }
}
