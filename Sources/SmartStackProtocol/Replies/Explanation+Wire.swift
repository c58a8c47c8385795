public import SmartStackCore

extension StackExplanation {
    /// The `Explain` reply.
    public var wireObject: JSONObject {
        var object = JSONObject(minimumCapacity: 15)
        object.appendNew("stack", .string(decision.stack.rawValue))
        object.appendNew("revision", .int(Int64(decision.revision)))
        object.appendNew("date", decision.time.wireValue)
        object.appendNew("order", .array(decision.entries.map { .object($0.wireObject) }))
        object.appendNew("smartRotate", .bool(smartRotate))
        object.appendNew("suggestions", .bool(suggestions))
        object.appendNew("developerMode", .bool(developerMode))
        object.appendNew("lastRotation", lastRotation.wireValue)
        object.appendNew("nextRotationAllowed", nextRotationAllowed.wireValue)
        object.appendNew("learnedFromLooks", .int(Int64(learnedFromLooks)))
        object.appendNew("ranker", .string(ranker.name))
        var performance = JSONObject(minimumCapacity: rankerPerformance.count)
        for name in rankerPerformance.keys.sorted() {
            performance.appendNew(name, .double(rankerPerformance[name] ?? 0))
        }
        object.appendNew("rankerPerformance", .object(performance))
        object.appendNew("holdMargin", .double(holdMargin))
        object.appendNew("heldTop", heldTop.map { .string($0.rawValue) } ?? .null)
        object.appendNew("withheldSuggestion", withheldSuggestion.map { .string($0) } ?? .null)
        object.appendNew("widgets", .array(widgets.map { .object($0.wireObject) }))
        return object
    }
}

extension WidgetExplanation {
    /// One widget of the `Explain` reply.
    public var wireObject: JSONObject {
        var object = JSONObject(minimumCapacity: 24)
        object.appendNew("instance", .string(instance.rawValue))
        object.appendNew("app", .string(kind.app.rawValue))
        object.appendNew("kind", .string(kind.kind))
        object.appendNew("position", .int(Int64(position)))
        object.appendNew("reason", .string(reason.rawValue))
        object.appendNew("score", .double(score))
        object.appendNew("behaviour", .double(behaviour))
        object.appendNew("relevance", .double(relevance))
        object.appendNew("contributions", .object(contributions.wireObject))
        object.appendNew("relevanceState", .object(relevanceState.wireObject))
        object.appendNew("relevantContext", relevantContext.map { .int(Int64($0)) } ?? .null)
        object.appendNew("relevanceGroup", relevanceGroup.map(JSONValue.string) ?? .null)
        object.appendNew("suppressedByGroup", .bool(suppressedByGroup))
        object.appendNew("rotationLimited", .bool(rotationLimited))
        object.appendNew("rotationsToday", .int(Int64(rotationsToday)))
        object.appendNew("rotationsLeftToday", .int(Int64(rotationsLeftToday)))
        object.appendNew("rotationLimitedBy", rotationLimitedBy.map { .string($0.rawValue) } ?? .null)
        object.appendNew("nextRotationAllowed", nextRotationAllowed.wireValue)
        object.appendNew(
            "engagement",
            .object([
                "taps": .double(engagement.taps), "ignoredImpressions": .double(engagement.ignoredImpressions),
                "demotedUntil": engagement.demotedUntil.wireValue, "factor": .double(engagement.factor),
            ]))
        object.appendNew("timeOnTop", timeOnTop.map(JSONValue.double) ?? .null)
        object.appendNew("pinned", .bool(pinned))
        object.appendNew("manualSwipeUntil", manualSwipeUntil.wireValue)
        object.appendNew("budget", .object(budget.wireObject))
        object.appendNew("nextReload", nextReload.wireValue)
        return object
    }
}

extension RelevanceState {
    /// `{status, score, normalized, since?, expires?, currentEntryDate?}`.
    public var wireObject: JSONObject {
        [
            "status": .string(status.rawValue), "score": .double(score), "normalized": .double(normalized),
            "since": since.wireValue, "expires": expires.wireValue, "currentEntryDate": currentEntryDate.wireValue,
        ]
    }
}

extension BudgetState {
    /// The `GetBudget` reply: `{capacity, used, left, nextAvailable}`; `nextAvailable` is `null` when the budget
    /// never frees up.
    public var wireObject: JSONObject {
        [
            "capacity": .int(Int64(capacity)), "used": .int(Int64(used)), "left": .int(Int64(left)),
            "nextAvailable": nextAvailable.wireValue,
        ]
    }
}
