public import SmartStackCore

/// `io.smartstack.Provider.RegisterWidget`: a widget kind, fully validated by Core when decoded.
public struct RegisterWidgetRequest: ProviderRequest {
    public static let method = SmartStackMethod.registerWidget
    public static let access = MethodAccess.provider
    public static let records = true
    public var anyRequest: SmartStackRequest { .registerWidget(self) }

    /// The kind, its intent schema and prediction mappings checked (`WidgetKind.init`).
    public var kind: WidgetKind
    /// When it was registered, if the caller said.
    public var date: Timestamp?

    public var app: AppID { kind.id.app }

    /// The most intent parameters, prediction mappings, and parameters of one mapping a kind may declare: a
    /// donation carries at most as many parameters (`Donation.maximumParameters`).
    public static let maximumParameters = Donation.maximumParameters
    /// The most `cases` or `suggestedEntities` of one intent parameter.
    public static let maximumOptions = 256
    /// The most UTF-8 bytes of a kind's names and texts together (display name, intent type, parameter names,
    /// titles, defaults, cases, suggested entities, prediction mappings). Kinds are kept in memory and in every
    /// snapshot, so one app's 256 kinds (`maxKindsPerApp`) stay within 16 MiB.
    public static let maximumTextBytes = 65_536

    public init(parameters: JSONObject) throws(VarlinkError) {
        let p = try Parameters(
            parameters,
            allowed: ["app", "kind", "displayName", "families", "intent", "predictionMapping", "date"])
        let app = try p.appID()
        let id = try p.kindID(app: app)
        let displayName = try p.optionalString("displayName") ?? id.kind
        var families = Set<WidgetFamily>()
        for (index, value) in try p.array("families").enumerated() {
            let path = "families[\(index)]"
            guard case .string(let text) = value else {
                throw .invalidParameter(path, reason: "expected a string, got \(value.typeName)")
            }
            let family = try Self.core { () throws(CoreError) in try WidgetFamily(parsing: text, parameter: path) }
            guard families.insert(family).inserted else {
                throw .invalidParameter(path, reason: "\(family.rawValue) is listed twice")
            }
        }
        let intent = try p.optionalStruct("intent", allowed: ["type", "parameters"]).map {
            (intent) throws(VarlinkError) in try Self.intentSchema(intent)
        }
        var mappings: [PredictionMapping] = []
        for mapping in try p.structs(
            "predictionMapping", allowed: ["intent", "parameters"], optional: true, maxCount: Self.maximumParameters)
        {
            mappings.append(
                PredictionMapping(
                    intentType: try mapping.string("intent"),
                    parameters: try mapping.optionalStringMap("parameters", maxCount: Self.maximumParameters) ?? [:]))
        }
        do throws(CoreError) {
            kind = try WidgetKind(
                id: id, displayName: displayName, families: families, intent: intent, predictionMappings: mappings)
        } catch {
            throw Self.wire(Self.renamingMappingPaths(error))
        }
        let bytes = Self.textBytes(of: kind)
        guard bytes <= Self.maximumTextBytes else {
            throw .invalidParameter(
                intent == nil ? "predictionMapping" : "intent",
                reason: "the kind's names and texts are \(bytes) bytes in all; at most \(Self.maximumTextBytes)")
        }
        date = try p.optionalTimestamp("date")
    }

    /// The UTF-8 bytes of a kind's names and texts.
    static func textBytes(of kind: WidgetKind) -> Int {
        var total = kind.displayName.utf8.count
        for parameter in kind.intent?.parameters ?? [] {
            total += parameter.name.utf8.count + (parameter.title?.utf8.count ?? 0)
            total += parameter.defaultValue?.matchKey.utf8.count ?? 0
            for option in parameter.cases { total += option.id.utf8.count + option.displayName.utf8.count }
            for option in parameter.suggestedEntities { total += option.id.utf8.count + option.displayName.utf8.count }
        }
        total += kind.intent?.type.utf8.count ?? 0
        for mapping in kind.predictionMappings {
            total += mapping.intentType.utf8.count
            for (donated, target) in mapping.parameters { total += donated.utf8.count + target.utf8.count }
        }
        return total
    }

    /// The event that registers the kind.
    public func event(defaultTime: Timestamp) -> EngineEvent {
        .registerKind(kind, at: date ?? defaultTime)
    }

    /// An `intent` struct: the type and its parameters, defaults read in their text form.
    private static func intentSchema(_ intent: Parameters) throws(VarlinkError) -> IntentSchema {
        let type = try intent.string("type")
        var schemas: [ParameterSchema] = []
        let allowed = ["name", "type", "title", "optional", "default", "cases", "suggestedEntities"]
        for parameter in try intent.structs("parameters", allowed: allowed, maxCount: maximumParameters) {
            var schema = ParameterSchema(
                name: try parameter.string("name"),
                type: try parameter.enumeration("type", ParameterType.self),
                title: try parameter.optionalString("title"),
                optional: try parameter.optionalBool("optional") ?? false,
                cases: try parameter.structs(
                    "cases", allowed: ["id", "displayName"], optional: true, maxCount: maximumOptions
                ).map {
                    (option) throws(VarlinkError) in
                    let id = try option.string("id")
                    return EnumCase(id: id, displayName: try option.optionalString("displayName") ?? id)
                },
                suggestedEntities: try parameter.structs(
                    "suggestedEntities", allowed: ["id", "displayName"], optional: true, maxCount: maximumOptions
                ).map { (option) throws(VarlinkError) in
                    let id = try option.string("id")
                    return EntityOption(id: id, displayName: try option.optionalString("displayName") ?? id)
                })
            if let text = try parameter.optionalString("default") {
                let path = parameter.path("default")
                let reference = schema
                schema.defaultValue = try core { () throws(CoreError) in
                    try ConfigurationValue.parse(text, as: reference, parameter: path)
                }
            }
            schemas.append(schema)
        }
        return try core { () throws(CoreError) in try IntentSchema(type: type, parameters: schemas, parameter: "intent")
        }
    }

    /// Core names prediction mappings `predictionMappings[i].intentType`; the wire says `predictionMapping[i].intent`.
    private static func renamingMappingPaths(_ error: CoreError) -> CoreError {
        guard case .invalidParameter(var parameter, let reason) = error,
            parameter.hasPrefix("predictionMappings")
        else { return error }
        parameter = "predictionMapping" + parameter.dropFirst("predictionMappings".count)
        if parameter.hasSuffix(".intentType") { parameter = parameter.dropLast("intentType".count) + "intent" }
        return .invalidParameter(parameter: parameter, reason: reason)
    }
}

// MARK: Typed calls

extension RegisterWidgetRequest {
    /// Registers `kind` (checked when it was made: `WidgetKind.init`).
    public init(kind: WidgetKind, date: Timestamp? = nil) { (self.kind, self.date) = (kind, date) }

    public var wireParameters: JSONObject {
        var writer = ParameterWriter()
        writer.add("app", kind.id.app.rawValue)
        writer.add("kind", kind.id.kind)
        writer.add("displayName", kind.displayName)
        writer.add("families", kind.families.sorted().map(\.rawValue))
        if let intent = kind.intent {
            writer.add(
                "intent",
                ["type": .string(intent.type), "parameters": .array(intent.parameters.map { .object(Self.wire($0)) })]
                    as JSONObject)
        }
        if !kind.predictionMappings.isEmpty {
            writer.add(
                "predictionMapping",
                kind.predictionMappings.map { mapping -> JSONObject in
                    [
                        "intent": .string(mapping.intentType),
                        "parameters": .object(ParameterWriter.map(mapping.parameters)),
                    ]
                })
        }
        writer.add("date", date)
        return writer.object
    }

    /// One intent parameter; its default in the text form `ConfigurationValue.parse` reads.
    private static func wire(_ schema: ParameterSchema) -> JSONObject {
        var writer = ParameterWriter()
        writer.add("name", schema.name)
        writer.add("type", schema.type.rawValue)
        writer.add("title", schema.title)
        if schema.optional { writer.add("optional", true) }
        writer.add("default", schema.defaultValue?.matchKey)
        if !schema.cases.isEmpty {
            writer.add(
                "cases",
                schema.cases.map { ["id": .string($0.id), "displayName": .string($0.displayName)] as JSONObject })
        }
        if !schema.suggestedEntities.isEmpty {
            writer.add(
                "suggestedEntities",
                schema.suggestedEntities.map {
                    ["id": .string($0.id), "displayName": .string($0.displayName)] as JSONObject
                })
        }
        return writer.object
    }
}
