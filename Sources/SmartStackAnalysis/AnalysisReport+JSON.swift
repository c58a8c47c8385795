import SmartStackCore
public import SmartStackProtocol

extension AnalysisReport {
    /// The report as one JSON document: `{"range", "entries", "stacks": [...], "widgets": [...], "notes",
    /// "machines": [...]}`.
    ///
    /// Times are RFC 3339 in UTC, durations seconds, shares 0–1; `null` where a value is unknown.
    public var jsonObject: JSONObject {
        let haveEngagement = entries.engagement > 0
        var object = JSONObject()
        object["range"] = .object([
            "since": Self.time(since), "until": Self.time(until), "start": Self.time(start), "end": Self.time(end),
            "seconds": seconds.map(JSONValue.double) ?? .null,
        ])
        object["entries"] = .object([
            "orderChanged": .int(Int64(entries.orderChanged)),
            "suggestionInserted": .int(Int64(entries.suggestionInserted)),
            "suggestionRemoved": .int(Int64(entries.suggestionRemoved)),
            "reloadRequested": .int(Int64(entries.reloadRequested)),
            "reloadWithheld": .int(Int64(entries.reloadWithheld)), "engagement": .int(Int64(entries.engagement)),
        ])
        object["stacks"] = .array(stacks.map { .object($0.jsonObject) })
        object["widgets"] = .array(widgets.map { .object($0.jsonObject(haveEngagement: haveEngagement)) })
        object["notes"] = .array(notes.map(JSONValue.string))
        object["machines"] = .array(machines.map { .object($0.jsonObject) })
        return object
    }

    /// RFC 3339 in UTC for microseconds since the epoch; `null` for `nil`.
    static func time(_ microseconds: Int64?) -> JSONValue {
        microseconds.map { .string(Timestamp(microseconds: $0).rfc3339) } ?? .null
    }
}

extension Tally {
    /// `{key: count}`, largest first.
    public var jsonObject: JSONObject {
        var object = JSONObject()
        for (key, count) in counts { object[key] = .int(Int64(count)) }
        return object
    }
}

extension StackSummary {
    public var jsonObject: JSONObject {
        var object = JSONObject()
        object["stack"] = .string(stack)
        object["decisions"] = .int(Int64(decisions))
        object["changes"] = .int(Int64(changes))
        object["topChanges"] = .int(Int64(topChanges))
        object["topChangesPerHour"] = topChangesPerHour.map(JSONValue.double) ?? .null
        object["timeOnTop"] = .array(
            timeOnTop.map {
                .object(["widget": .string($0.widget), "seconds": .double($0.seconds), "share": .double($0.share)])
            })
        object["medianTimeOnTopSeconds"] = medianTimeOnTop.map(JSONValue.double) ?? .null
        object["rotationReasons"] = .object(rotationReasons.jsonObject)
        object["manualSwipes"] = .int(Int64(manualSwipes))
        object["suggestionsInserted"] = .int(Int64(suggestionsInserted))
        object["suggestionsRemoved"] = .int(Int64(suggestionsRemoved))
        object["reloadsRequested"] = .int(Int64(reloadsRequested))
        object["reloadsWithheld"] = .int(Int64(reloadsWithheld))
        object["widgets"] = .array(lanes.map(JSONValue.string))
        object["first"] = AnalysisReport.time(first)
        object["last"] = AnalysisReport.time(last)
        return object
    }
}

extension WidgetSummary {
    public func jsonObject(haveEngagement: Bool) -> JSONObject {
        var object = JSONObject()
        object["widget"] = .string(widget)
        object["stack"] = stack.isEmpty ? .null : .string(stack)
        object["surfaced"] = .int(Int64(surfaced))
        object["surfacedByRelevance"] = .int(Int64(surfacedByRelevance))
        object["surfacedByBehaviour"] = .int(Int64(surfacedByBehaviour))
        object["surfacedBy"] = .object(surfacedBy.jsonObject)
        object["timeOnTopSeconds"] = .double(timeOnTop)
        object["shareOfTop"] = .double(shareOfTop)
        object["taps"] = haveEngagement ? .int(Int64(taps)) : .null
        object["tapsAfterSurfaced"] = haveEngagement ? .int(Int64(tapsAfterSurfaced)) : .null
        object["engagementRate"] = engagementRate(haveEngagement: haveEngagement).map(JSONValue.double) ?? .null
        object["reloadsRequested"] = .int(Int64(reloadsRequested))
        object["reloadsWithheld"] = .int(Int64(reloadsWithheld))
        return object
    }
}

extension MachineSummary {
    public var jsonObject: JSONObject {
        var object = JSONObject()
        object["machineID"] = machineID.isEmpty ? .null : .string(machineID)
        object["hostname"] = hostname.isEmpty ? .null : .string(hostname)
        object["label"] = .string(label)
        object["entries"] = .object([
            "orderChanged": .int(Int64(entries.orderChanged)),
            "suggestionInserted": .int(Int64(entries.suggestionInserted)),
            "suggestionRemoved": .int(Int64(entries.suggestionRemoved)),
            "reloadRequested": .int(Int64(entries.reloadRequested)),
            "reloadWithheld": .int(Int64(entries.reloadWithheld)), "engagement": .int(Int64(entries.engagement)),
            "total": .int(Int64(entries.total)),
        ])
        object["stacks"] = .int(Int64(stacks))
        object["decisions"] = .int(Int64(decisions))
        object["topChanges"] = .int(Int64(topChanges))
        object["first"] = AnalysisReport.time(first)
        object["last"] = AnalysisReport.time(last)
        return object
    }
}
