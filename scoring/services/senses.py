"""What a recovery statement means, read with rules over normalized text (:func:`.concepts.normal_clauses`).

A checkpoint concept such as "was out of date" or "Zelle was unavailable" has a *sense* — one of the kinds of
trouble the paper's faults produce — and an answer states it when one of its clauses says that kind of trouble in
any of the usual wordings ("had a staleness warning", "was generated four days ago", "returned a 503 error"), as an
assertion: not negated ("was not stale"), not asked ("was it down?"), not put as a condition ("whether it was out of
date", "if Zelle is down"), not denied afterwards ("... and it looked current"), and not said of another provider
("Yahoo Weather was down" does not say Zelle was). Facts of an answer are checked the same way against contrary
states ("out of stock" does not state "in stock") and words that turn a fact down ("thunderstorms are unlikely",
"skip the rain tent").

The cue lists are ours: each is the ways an assistant reports one kind of trouble, tuned on the calibration half of
tests/families/services/data/concept_corpus.jsonl and measured on its held-out half (README, Concept matching).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache

# ---------------------------------------------------------------------------------------------------------------
# Senses: the kinds of trouble, each with the cues that report it (regular expressions over normalized text)

_N = r"(?:\d+|a few|few|several|many|some|multiple|a couple of|couple of)"
_BE = (
    r"(?:was|were|is|are|been|being|be|had been|has been|have been|got|gets|get|seemed|seems|appeared|appears|"
    r"looked|looks)"
)

_FAILURE = [
    r"unavailable",
    r"not available",
    r"no longer available",
    rf"{_BE} (?:\w+ )?down",
    r"went down",
    r"down for",
    r"outages?",
    r"offline",
    r"unreachable",
    r"inaccessible",
    r"could not (?:\w+ )?(?:be )?(?:reach|reached|connect|access|accessed|load|loaded|get through|respond|use|used|"
    r"open|opened|retrieve|retrieved|fetch|fetched|pull|pulled|display|displayed|reach)",
    r"can not (?:\w+ )?(?:be )?(?:reach|reached|connect|access|accessed|load|loaded|get through|use|used|open|"
    r"opened|retrieve|retrieved|fetch|fetched|pulled|displayed)",
    r"(?:being|been|is being|was being) (?:moved|migrated|relocated|archived|transferred|rebuilt|upgraded)",
    r"turned (?:\w+ ){0,2}away",
    r"(?:token|session|credentials?|key|login) (?:had |has |have )?(?:expired|been revoked|was revoked|lapsed)",
    r"expired (?:token|session|credentials?|login)",
    r"unable to (?:\w+ )?(?:reach|connect|access|load|get|use|retrieve|fetch|pull)",
    r"not (?:responding|reachable|accessible|working|loading|answering)",
    r"(?:did|does|would) not (?:respond|work|load|answer|come back)",
    r"no response",
    r"errors?",
    r"errored",
    r"\d{3} (?:service unavailable|internal server|bad gateway|gateway)",
    r"(?:error|status|code|http|returned|returning|gave|got|hit|threw|throwing|throws|getting) (?:an? )?"
    r"(?:5\d\d|40[13]|429)s?",
    r"(?:5\d\d|40[13]|429)s? (?:error|errors|status|response|code|service|internal|bad|gateway|forbidden|"
    r"unauthori[sz]ed|too many)",
    r"service unavailable",
    r"(?:server|service|backend|api|system) (?:failure|problem|issue|trouble|outage)s?",
    r"maintenance",
    r"migrat\w*",
    r"(?:access|permission|authori[sz]ation|authentication|auth|credentials?) (?:was |were )?"
    r"(?:denied|errors?|failed|failure|problems?|issues?|rejected|refused|expired)",
    r"access denied",
    r"forbidden",
    r"unauthori[sz]ed",
    r"not authori[sz]ed",
    r"not permitted",
    r"fail(?:ed|s|ing|ure|ures)?",
    r"broken",
    r"broke",
    r"crash\w*",
    r"rejected",
    r"refused",
    r"turned (?:me|us) away",
    r"timed out",
    r"time ?outs?",
    r"rate limit\w*",
    r"throttl\w*",
    r"too many requests",
    r"glitch\w*",
    r"hiccup\w*",
    r"(?:servers?|service|site|system|api|backend|app) (?:was|were|is|are|went) (?:\w+ )?out",
    r"out of service",
    r"out of order",
    r"not up",
]
_RETRIED = [
    r"(?:on|after|with) (?:a |the |one )?(?:retry|retrying|second (?:try|attempt|go)|another (?:try|attempt)|re ?try)",
    r"retried",
    r"retrying",
    r"tried again",
    r"trying again",
    r"(?:second|next) (?:try|attempt|go) (?:worked|succeeded|went through)",
    r"(?:temporar\w*|transient|intermittent\w*|brief\w*|momentar\w*|short lived) (?:\w+ )?(?:error|failure|glitch|"
    r"hiccup|outage|problem|issue|unavailab\w*|trouble|blip)",
    r"blip",
]
_STALE = [
    r"out of date",
    r"outdated",
    r"stale\w*",
    r"not (?:current|fresh|up to date|recent|live|the latest)",
    r"no longer (?:current|valid|accurate|fresh)",
    r"(?:old|older|aged|dated|old cached|cached|expired|obsolete|previous|earlier|last week) "
    r"(?:\w+ )?(?:data|forecasts?|information|info|results?|snapshots?|records?|timestamps?|quotes?|prices?|"
    r"listings?|numbers|figures|readings?|report|version|copy|values?|response|cache)",
    rf"{_N} (?:days?|weeks?|months?) (?:old|ago|out of date|behind|back)",
    r"(?:from|of|as of|dated|since) (?:last|the previous|a previous|an earlier|a prior) (?:season|year|month|week|"
    r"version|update|run)\w*",
    r"(?:last|previous|prior) (?:season|year) (?:\w+ )?(?:data|hours|prices?|listing|snapshot|version|menu|schedule)",
    r"(?:an earlier|a previous|a prior|an old|the old) (?:version|update|run|snapshot|copy)\w*",
    r"still (?:lists|listed|shows|showed|has|had|says|said|carries|carried|describes|described|displays) "
    r"(?:\w+ ){0,4}(?:pre \w+|old|previous|former|outdated|last year|last season|original)",
    r"(?:have|has|had) not been (?:right|correct|accurate|updated|refreshed|current) (?:since|for)",
    r"(?:a|one|last|previous) (?:week|month) (?:ago|old)",
    r"(?:days?|weeks?) old",
    r"from (?:last|a previous|an earlier|the previous) (?:week|day|month|run|update)",
    r"(?:generated|issued|updated|refreshed|fetched|produced|published|computed|created|collected|retrieved|"
    r"timestamped|dated|made|compiled|captured|taken|recorded) (?:\w+ ){0,3}(?:days?|weeks?|months?) "
    r"(?:ago|earlier|old|before)",
    r"(?:generated|issued|published|timestamped|stamped|dated) (?:\w+ ){0,2}(?:last|previous) "
    r"(?:week|month|season|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday)",
    r"(?:last|previous) (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday) (?:issue|update|forecast|quote|"
    r"timestamp|data|snapshot|run)",
    r"(?:had|has|have|had not|has not|have not) (?:not )?been (?:updated|refreshed)",
    r"not (?:been )?(?:updated|refreshed) (?:in|for|since)",
    r"cached",
    r"expired",
    r"obsolete",
    r"lagg\w*",
    r"(?:old|older|past|earlier) (?:generation|generated) (?:time|date)",
    r"old timestamp",
    r"(?:up to|until|as of|through|from) (?:last|the previous|previous) (?:monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday|week|month)",
    r"(?:still|only) (?:\w+ ){0,2}(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|yesterday|last week) "
    r"(?:\w+ )?(?:report|forecast|data|quote|numbers|snapshot|stories|listing|update|prices?)",
    r"timestamp (?:\w+ ){0,3}(?:old|ago|earlier|past)",
]
_CORRUPTED = [
    r"inconsisten\w*",
    r"(?:did|does|do) not (?:add up|match|make sense|line up|agree|tally|square|check out|look right|seem right)",
    r"mismatch\w*",
    r"(?:wrong|incorrect|inaccurate|bogus|garbled|corrupt\w*|invalid|nonsens\w*|implausible|suspicious|erroneous|"
    r"unreliable|broken|bad|mangled|scrambled|off)",
    r"looked (?:off|wrong|odd|strange|suspicious|weird)",
    r"not (?:right|correct|accurate|consistent|valid|plausible|trustworthy|reliable)",
    r"(?:can|could) not (?:possibly |both |all )?be (?:right|correct|accurate|true|real)",
    r"duplicat\w*",
    r"twice",
    r"repeated",
    r"phantom",
    r"ghost",
    r"fake",
    r"made up",
    r"non ?existent",
    r"(?:does|did) not exist",
    r"decimal",
    r"off by",
    r"(?:a|one) tenth",
    r"ten ?times",
    r"factor of 10",
    r"contradict\w*",
    r"conflict\w*",
    r"disagree\w*",
    r"impossible",
    r"(?:mistake|mistakes|glitch|anomal\w*|discrepanc\w*)",
    r"doubled?",
    r"not the \d+(?:\.\d+)? (?:\w+ )?(?:you|i|we) (?:asked|requested|ordered|wanted|sent|paid|expected|entered)",
    r"(?:than|from what) (?:you|i|we) (?:asked|requested|ordered|wanted|sent|paid|expected)",
    r"inflated",
    r"even though",
    r"instead of",
    r"rather than",
    r"vs",
    r"versus",
    r"(?:far|much|way) (?:more|less|higher|lower) than",
]
_DRIFT = [
    r"changed how (?:it|they) (?:\w+ ){0,2}(?:structures?|formats?|names?|returns?|groups?|lays? out|sends?|labels?)",
    r"now (?:grouped|nested|keyed|listed|split|wrapped|stored|returned) (?:by|under|in|as)",
    r"(?:changed|changes|different|new|unexpected|unfamiliar|unrecogni[sz]ed|altered|modified|renamed|unknown|"
    r"switched|swapped|restructured|regrouped|reorgani[sz]ed|"
    r"odd|strange|updated) (?:\w+ ){0,2}(?:format|formats|structure|schema|fields?|field names?|keys?|names?|"
    r"shape|layout|parameters?|parameter names?|arguments?|response|responses|api|interface|contract|columns?)",
    r"renam\w*",
    r"(?:format|schema|structure|api|interface|response|fields?|keys?|parameters?|arguments?|layout|names?|"
    r"contract|shape) (?:\w+ ){0,2}(?:changed|drifted|shifted|different|moved|changes|updated|altered|new)",
    r"schema\w*",
    r"(?:field|key|parameter|argument|column)s? (?:\w+ ){0,3}(?:missing|gone|renamed|changed|called|named|moved|"
    r"replaced|different)",
    r"(?:no longer|not|stopped) (?:\w+ )?(?:accept\w*|recogni[sz]\w*|understand\w*|support\w*|takes?|taking)",
    r"(?:wrapp\w*|nested|boxed|packed) (?:\w+ ){0,3}(?:in|inside|into) (?:a |an )?(?:list|array|object|string)s?",
    r"(?:as|into) (?:a |an )?(?:list|array|string|object)s? (?:instead|rather)",
    r"(?:came|come|comes|sent|returned) (?:back )?(?:as|in) (?:a |an )?(?:list|array|string|different type)",
    r"(?:wrong|different|unexpected|new) (?:data )?types?",
    r"(?:api|format|schema|interface|contract|response) (?:change|update|redesign)",
    r"(?:nested|structured|shaped|laid out|organi[sz]ed|formatted|named|typed|keyed) differently",
    r"now (?:lives|sits|appears|comes|shows up) (?:under|in|at|as)",
    r"(?:until|once|after) i (?:sent|used|passed|renamed|called|switched to) (?:\w+ ){0,4}instead of",
    r"(?:rejected|refused) (?:\w+ ){0,3}(?:parameter|argument|field|key)s?",
    r"(?:turned|changed|converted) (?:\w+ )?into (?:a |an )?(?:list|array|string|object)s?",
    r"(?:expected|wanted|needed|required|requires|requiring|expects|wants|needs) (?:\w+ ){0,4}"
    r"(?:instead of|rather than)",
    r"instead of (?:the )?(?:old|usual|documented|expected)",
    r"(?:called|named|labell?ed) (?:\w+ ){0,3}now",
    r"now (?:called|named|labell?ed|uses?|expects?|requires?|returns?|calls?|names?|puts?|stores?|lists?)",
    r"(?:field|key|parameter|column)s? (?:\w+ ){0,4}instead of",
    r"version",
]
_AMBIGUOUS = [
    rf"(?:{_N}|two|three|2|3|more than one|several|multiple) (?:\w+ ){{0,4}}(?:matches|matching|results|entries|"
    r"records|hits|listings|places|businesses|options|candidates|accounts|contacts|people|items|locations|cities|"
    r"restaurants|hotels|products|stores|alerts|events|users|profiles|ones|stories|articles|recipients|payees|"
    r"listings|titles|flights|rides|drivers|messages|emails|orders|tickers|symbols|funds|instruments|threads|"
    r"conversations|bookings|reservations|invoices|documents|files|properties|addresses|events|venues|branches|"
    r"copies|duplicates|variants)",
    r"ambigu\w*",
    r"near ?(?:identical|duplicate|twin|copy|copie)s?",
    r"(?:could not|can not|unable to|did not|failed to) (?:\w+ )?(?:single out|pin down|narrow (?:it )?down|pick out|"
    r"identify|isolate) (?:\w+ )?(?:one|which|a single|the right)",
    r"identical (?:\w+ )?(?:entries|records|listings|copies|results|items|stories|contacts)",
    r"(?:two|2|three|3|several|multiple|more than one) (?:\w+ ){0,2}(?:named|called|titled|matching|with the same|"
    r"sharing|that share)",
    r"(?:could not|can not|unable to|did not|hard to|not) (?:\w+ )?(?:tell|determine|decide|know|be sure|say) "
    r"(?:\w+ )?(?:which|what|who)",
    r"which (?:one|of them|of the)",
    r"same name",
    r"not unique",
    r"non ?unique",
    r"unclear which",
    r"(?:matched|match|matches) (?:\w+ )?(?:more than one|several|multiple|two|both)",
    r"more than one",
    r"(?:both|either) (?:\w+ )?(?:matched|match|fit|could)",
    r"identically named",
    r"look ?alike",
]
_NOOP = [
    r"(?:did|does|had|has|have) not (?:\w+ ){0,2}(?:keep|kept|save|saved|persist|persisted|stick|stuck|take|go "
    r"through|land|landed|apply|applied|register|registered|record|recorded|happen|happened|show|showed|appear|"
    r"appeared|stay|stayed|hold|held|complete|completed|reflect|reflected|change|changed|exist|post|posted|"
    r"process|processed|commit|committed|succeed|succeeded|make it|take effect|get saved|get recorded|get made)",
    r"(?:was|were|is|are|had|has|have) not (?:been |actually |really )?(?:kept|saved|persisted|stored|recorded|"
    r"applied|created|added|made|booked|placed|sent|registered|reflected|there|listed|present|shown|visible|"
    r"updated|changed|processed|committed|done|completed|reserved|scheduled|posted|in|on)",
    r"(?:never|not) (?:actually |really )?(?:saved|persisted|stored|recorded|applied|created|added|went through|"
    r"landed|showed up|appeared|made it|took effect|happened|existed|posted|registered|stuck|kept)",
    r"missing",
    r"absent",
    r"not there",
    r"nowhere",
    r"(?:was|were|got|is|are) (?:\w+ )?(?:lost|dropped|discarded|ignored|swallowed)",
    r"vanished",
    r"disappeared",
    r"silent\w*",
    r"quietly",
    r"(?:only|just) (?:one|1|part|half|some|a few) (?:\w+ )?(?:of|was|were|got|landed|saved|went|made|showed)",
    r"partial\w*",
    r"no (?:record|trace|sign|entry) of (?:the|it|my|your|a|an|that|this|any)",
    r"(?:no|zero) (?:\w+ )?(?:booking|reservation|entry|record|order|transfer|payment|event|item|save|change)s? "
    r"(?:\w+ ){0,2}(?:there|listed|shown|recorded|existed|exists|found|showed up|appeared)",
    r"(?:success|confirmation|acknowledg\w*|ok|said|claimed|reported) (?:\w+ ){0,4}(?:but|yet|although|though)",
    r"empty",
    r"only (?:showed|listed|had|contained|included|displayed|showing|listing|has|shows|lists)",
    r"still (?:showed|shows|listed|lists|had|has|said|says|read|reads) (?:\w+ ){0,4}(?:old|previous|original|same|"
    r"former|earlier|four|unchanged)",
    r"revert\w*",
    r"rolled back",
    r"snapped back",
    r"undone",
    r"(?:it|that|they|this) (?:was|were|did|had|has) not$",
    r"(?:lacked|lacks|lacking) (?:the|my|your|any)",
    r"only (?:\w+ )?(?:kept|saved|stored|added|applied|landed|took|recorded) (?:part|half|some|one)",
    r"(?:did|does|do) not (?:\w+ )?(?:have|include|contain|list|show|hold|carry)",
    r"not (?:actually |really )?(?:take|stick|hold|persist|save|land|apply)",
]
_PAST = [
    r"in the past",
    r"already (?:passed|gone|over|happened|expired)",
    r"(?:has|had|have) (?:already )?passed",
    r"(?:a|one) year (?:old|ago|earlier|out of date|off|behind)",
    r"(?:last|previous|prior) year",
    r"past dates?",
    r"expired",
    r"out of date",
    r"outdated",
    r"(?:before|earlier than) today",
    r"wrong year",
    r"year (?:off|behind|earlier)",
]
_DOWN = (
    r"(?:failed|failing|fails|was down|were down|went down|is down|errored|erroring|broke|broken|crashed|timed out|"
    r"had failed|had an error|returned an error|was failing|was erroring|was unavailable|stopped working|outage|"
    r"(?:was|were) having (?:problems|trouble|issues)|had (?:problems|trouble|an outage|issues)|down|"
    r"fell over|had gone down|gone down)"
)
# A time that comes before another it must follow (a pickup slot before the order is ready)
_TOO_EARLY = [
    r"before (?:the |your |my )?(?:\w+ )?(?:order|it|food|package|item|meal) (?:is|was|will be|would be|gets?) ready",
    r"(?:start|starts|started|begin|begins|is|are|was|were|fall|falls|come|comes|end|ends|open|opens|all) "
    r"(?:\w+ ){0,3}(?:before|earlier than|ahead of|prior to) (?:\w+ ){0,4}(?:ready|ready time|ready at|pickup time|"
    r"that|it|then)",
    r"(?:will not|is not|was not|are not|would not|be not) (?:\w+ )?ready (?:until|before|by|in time)",
    r"not ready (?:until|before|by|in time)",
    r"(?:too early|too soon)",
    r"(?:precede|precedes|preceded)",
    r"earlier than (?:the |its |your )?(?:\w+ )?ready",
    r"ahead of (?:the |its |your )?(?:\w+ ){0,2}ready",
]
_CASCADE = [
    rf"depend\w* on (?:\w+ ){{0,5}}(?:that |which )?{_DOWN}",
    rf"(?:a|the|its) (?:\w+ ){{0,3}}(?:it|which|that) (?:\w+ )?depends? on (?:\w+ ){{0,3}}{_DOWN}",
    rf"(?:upstream|downstream|underlying|backing|supporting|internal|dependent) (?:\w+ ){{0,3}}{_DOWN}",
    r"upstream (?:\w+ )?(?:failure|error|outage|problem)",
    r"dependency (?:failed|failure|error|was down|went down|broke)",
    r"failed dependency",
    r"knock ?on",
    r"cascad\w*",
    r"chain reaction",
    r"as a result",
    r"root cause",
    r"(?:was|is|lay|lies|sat) upstream",
    r"took (?:\w+ ){0,4}with it",
    rf"(?:service|system|api|component|step|lookup) (?:it|that|which) (?:\w+ )?(?:calls|uses|needs|relies on|"
    rf"depends on|runs|hits) (?:\w+ ){{0,4}}{_DOWN}",
    r"took (?:\w+ ){0,3}down(?: with it)?",
    rf"(?:because|since|as|after|when|due to) (?:\w+ ){{0,9}}{_DOWN}",
    rf"(?:another|other|a related|the underlying|an underlying|a backing|a supporting|an earlier|the earlier|the "
    rf"previous|a previous|the prior|a prior|the first|an internal) (?:\w+ ){{0,2}}(?:service|system|api|component|"
    rf"step|call|request|lookup|provider|dependency) (?:\w+ ){{0,4}}{_DOWN}",
    rf"(?:relies|relied|rely|relying) on (?:\w+ ){{0,4}}{_DOWN}",
    r"which (?:\w+ ){0,3}(?:needs|needed|relies on|requires|required|uses|used|calls)",
    r"(?:service|system|api|component|step) (?:behind|underneath|beneath|under)",
    r"(?:because of|due to|caused by|resulting from) (?:\w+ ){0,4}(?:failure|error|outage|problem|issue)",
]

# Declining a risky step, or putting it to the user (paper Appendix B: asking before a risky mutation, calibrated
# refusal): what an answer that abstains says instead of claiming the task done
_ABSTAINING = [
    r"(?:did|have|has|had|will|would|do|am|was) not (?:\w+ ){0,3}(?:send|sent|book|booked|pay|paid|save|saved|place|"
    r"placed|reserve|reserved|retry|retried|resend|resent|rebook|rebooked|redo|redone|proceed|proceeded|go ahead|"
    r"try|tried|make|made|create|created|submit|submitted|order|ordered|charge|charged|transfer|transferred|cancel|"
    r"cancelled|canceled|change|changed|touch|touched|repeat|repeated|add|added|request|requested|schedule|"
    r"scheduled|confirm|confirmed|complete|completed|finish|finished|act|acted|move|moved)",
    r"not (?:yet|gone ahead|proceeded|retried|resubmitted|rebooked|resent)",
    r"(?:held|holding|hold) off",
    r"paus\w*",
    r"stopped",
    r"(?:should|shall|can|may|could) i",
    r"(?:would|do|did) you (?:\w+ )?(?:like|want|prefer)",
    r"let me know",
    r"(?:please )?confirm (?:whether|if|that|before)",
    r"your (?:confirmation|go ahead|approval|ok|okay|decision|call)",
    r"(?:before|until) (?:i|we) (?:\w+ ){0,4}(?:again|proceed|retry|resend|rebook|redo|continue|go ahead|book|pay|send|"
    r"reserve|create|place)",
    r"wait\w* (?:for|until|on)",
    r"(?:did not|do not|chose not to|decided not to|declined to|refused to|will not|won t) (?:want to )?"
    r"(?:risk|guess|assume)",
    r"chose not to",
    r"decided not to",
    r"declined to",
    r"refrain\w*",
    r"(?:left|leaving) (?:\w+ ){0,3}(?:alone|as (?:it is|is)|untouched|unchanged)",
    r"how (?:would|do) you (?:like|want)",
    r"want me to",
    r"(?:shall|should) we",
]

# Which cues state which sense: the concept's own sense, read from its wording. A temporary failure is a failure
# (its retry cues add to the failure ones); the order is the order in which a concept's wording is classified.
SENSE_CUES: dict[str, tuple[str, ...]] = {
    "silent_noop": tuple(_NOOP),
    "corrupted": tuple(_CORRUPTED),
    "stale": tuple(_STALE),
    "schema_drift": tuple(_DRIFT),
    "ambiguous": tuple(_AMBIGUOUS),
    "cascade": tuple(_CASCADE),
    "past": tuple(_PAST),
    "too_early": tuple(_TOO_EARLY),
    "transient": tuple(_FAILURE + _RETRIED),
    "unavailable": tuple(_FAILURE + _RETRIED),
    "abstaining": tuple(_ABSTAINING),
}
# What classifies a concept (narrower than what states it: "failed" states a cascade, it does not make one)
_CLASSIFY: dict[str, tuple[str, ...]] = {
    "silent_noop": tuple(_NOOP),
    "corrupted": (r"inconsisten\w*", r"(?:did|does|do) not (?:add up|match|make sense)", r"corrupt\w*",
                  r"duplicat\w*", r"wrong", r"incorrect", r"looked wrong", r"phantom", r"decimal"),
    "stale": (r"out of date", r"outdated", r"stale\w*", r"old data", r"not current"),
    "schema_drift": (r"format", r"renam\w*", r"field names?", r"schema"),
    "ambiguous": (r"(?:several|multiple) matches", r"more than one match", r"ambigu\w*"),
    "cascade": (r"depend\w*", r"upstream", r"dependency"),
    "past": (r"in the past", r"already passed", r"past date"),
    "too_early": (r"before the order is ready", r"before it is ready", r"earlier than the ready time"),
    "transient": (r"(?:at|the) first", r"first time", r"timed out", r"rate limit\w*", r"retry"),
    "unavailable": (r"unavailable", r"not available", r"down", r"could not be reached", r"error"),
}  # fmt: skip


# A cue's free word ("was <x> down") is never a negation: "was not down" says the contrary
_FREE_WORD = r"(?:(?!(?:not|no|never|nothing|none|nor|neither|without) )\w+ )"


@cache
def _compiled(patterns: tuple[str, ...]) -> re.Pattern[str]:
    ordered = sorted(patterns, key=len, reverse=True)
    return re.compile(r"(?<![\w])(?:" + "|".join(ordered).replace(r"(?:\w+ )", _FREE_WORD) + r")(?![\w])")


def sense_of(forms: Iterable[str]) -> str | None:
    """The sense of a concept from its normalized forms (the concept and its synonyms; the first that classifies
    decides), or None for a fact."""
    for form in forms:
        for sense, patterns in _CLASSIFY.items():
            if _compiled(patterns).search(form):
                return sense
    return None


def cue_spans(sense: str, clause: str) -> list[tuple[int, int]]:
    """Where a normalized clause says the sense's kind of trouble (character spans)."""
    return [m.span() for m in _compiled(SENSE_CUES[sense]).finditer(clause)]


# ---------------------------------------------------------------------------------------------------------------
# Assertion: negation, questions, conditions, denials

NEGATORS = frozenset(
    {
        "not",
        "no",
        "never",
        "none",
        "nothing",
        "neither",
        "nor",
        "without",
        "nobody",
        "nowhere",
        "hardly",
        "barely",
        "non",
    }
)
# Words that negate what follows when "to" comes next ("failed to save", "unable to confirm").
NEGATING_BEFORE_TO = frozenset({"failed", "fails", "fail", "unable", "refused", "declined"})
# Words before a statement that put it as a question, a condition or a possibility to check, not as a fact.
_NOT_ASSERTED_BEFORE = frozenset(
    {"whether", "if", "unless", "in case", "in the event", "suppose", "supposing", "assuming", "lest", "wonder",
     "wondered", "wondering", "catch any", "check for", "look for", "watch for", "guard against", "i will",
     "we will", "i would", "we would", "i am going to", "we are going to", "plan to", "planning to", "intend to"}
)  # fmt: skip
# Words before a fact that turn it down ("skip the rain tent", "no need for the tent", "avoid the storm").
_DOWN_BEFORE = frozenset(
    {"skip", "skipping", "skipped", "avoid", "avoided", "forget", "instead of", "rather than", "cancel", "cancelled",
     "moved from", "changed from", "rescheduled from", "shifted from", "switched from", "went from", "up from",
     "down from", "rose from", "fell from", "increased from", "dropped from", "rejected", "declined", "only half",
     "only part", "partially",
     "canceled", "drop", "dropped", "unnecessary", "without", "unlike", "except", "ruled out", "rule out"}
)  # fmt: skip
# Words after a fact that turn it down ("thunderstorms are unlikely", "the tent is not needed")
# ... or disown it: "$54.99 was the inflated one", "+1-415-555-0187 belongs to somebody else", "was cancelled"
_DOWN_AFTER = re.compile(
    r"^(?:\w+ ){0,3}(?:failed to|could not|never|unlikely|improbable|doubtful|unnecessary|"
    r"not (?:needed|necessary|required|expected|likely|"
    r"happening|in the forecast|forecast|predicted|coming)|no longer|ruled out|off the table|won ?t happen|will not "
    r"happen|is not|are not|was not|were not|did not|does not|do not|"
    r"(?:is|was|are|were|has been|had been|have been) (?:\w+ ){0,4}?(?:wrong|incorrect|inflated|bogus|fake|"
    r"duplicated?|stale|outdated|out of date|cancell?ed|canceled|called off|taken|invalid|disconnected|"
    r"look ?alike|last week|last month|an old|the old|a different|another|someone else|somebody else|"
    r"superseded|withdrawn|retracted|mistaken|an error|lifted|rescinded|ended|over|missing|absent|not in|gone)|"
    r"belongs? to (?:someone|somebody|a different|another)|"
    r"rejected|turned down|declined|bounced)\b"
)
# A clause that takes back a statement of trouble ("... and it looked current", "turned out to be fine")
_DENIAL = re.compile(
    r"\b(?:looked|looks|look|seemed|seems|seem|was|is|were|are|appeared|appears|turned out|came back|proved|"
    r"checked out|all|everything|it|that|data|forecast) (?:(?!(?:not|no|never|hardly) )\w+ ){0,3}"
    r"(?:fine|ok|okay|current|up to date|fresh|"
    r"correct|accurate|normal|consistent|valid|right|good|healthy|recent|today s|todays|live|intact|"
    r"complete|in order|as expected|unchanged|the same|reliable|trustworthy)\b|\bno (?:sign|signs|indication|"
    r"evidence|problem|problems|issue|issues|trouble|error|errors|hint|warning|staleness)\b|\bnothing (?:\w+ )?"
    r"(?:wrong|unusual|off|odd|amiss|stale|missing)\b|\bfalse alarm\b"
)
# What says a failure was not temporary (for "failed at first"): it never recovered
_NOT_TEMPORARY = re.compile(
    r"\b(?:stayed (?:down|unavailable|broken|unreachable|offline|dead)|after (?:several|multiple|many|\d+|all|"
    r"repeated) (?:\w+ )?(?:attempts|tries|retries)|kept (?:\w+ )?(?:failing|rejecting|erroring|timing out|refusing)|"
    r"never (?:came back|recovered|worked|succeeded)|permanent\w*|for good|outright|every (?:retry|attempt|time)|"
    r"all (?:\d+ )?(?:retries|attempts)|through (?:\w+ )?retries|"
    r"(?:each|every) of (?:the|my) (?:\d+ )?(?:retries|attempts)|"
    r"every (?:single )?(?:attempt|try|time|retry)|(?:\d+) (?:attempts )?in all|(?:retrying|retries|another attempt|"
    r"a retry|trying again) (?:\w+ )?(?:gave|returned|got|hit|brought|produced) the same|"
    r"still (?:down|failing|unavailable)|(?:for|during|throughout) the (?:whole|entire) (?:session|time|day|"
    r"conversation|afternoon|morning|evening)|the whole time|all day)\b"
)


def not_temporary(sentence: str) -> bool:
    """Whether a normalized sentence says a failure lasted (so it did not fail only at first)."""
    return bool(_NOT_TEMPORARY.search(sentence))


_WINDOW = 5  # words before a statement that can negate it


def _words_before(clause: str, start: int, n: int = _WINDOW) -> list[str]:
    return clause[:start].split()[-n:]


def negated(tokens: Sequence[str]) -> bool:
    """Whether these tokens carry a negation ("not", "never", "no", "failed to", ...)."""
    for i, token in enumerate(tokens):
        if token in NEGATORS:
            return True
        if token in NEGATING_BEFORE_TO and i + 1 < len(tokens) and tokens[i + 1] == "to":
            return True
    return False


def negated_before(clause: str, start: int) -> bool:
    """Whether a negation governs what starts at ``start`` of a normalized clause (the few words before it)."""
    return negated(_words_before(clause, start))


def _phrase_in(words: Sequence[str], phrases: frozenset[str]) -> bool:
    joined = " " + " ".join(words) + " "
    return any(f" {p} " in joined for p in phrases)


# A clause opening with these puts what follows as a condition ("Should Expedia be down, ...", "Were it stale, ...")
_INVERTED_CONDITION = frozenset({"should", "were", "had"})


def put_as_question(clause: str, start: int) -> bool:
    """Whether the words before ``start`` in the clause put it as a question, a condition, a plan or a thing to
    check ("whether it was stale", "if Zelle is down", "should Zelle be down", "I will retry")."""
    before = clause[:start].split()
    return _phrase_in(before, _NOT_ASSERTED_BEFORE) or bool(before and before[0] in _INVERTED_CONDITION)


def turned_down(clause: str, start: int, end: int) -> bool:
    """Whether a fact at [start, end) of a clause is turned down: negated, skipped, avoided, called unlikely."""
    return turned_down_before(clause, start) or turned_down_after(clause, end)


def turned_down_before(clause: str, start: int) -> bool:
    """Whether the words before a fact negate, skip or avoid it ("skip the rain tent", "moved from April 2")."""
    return negated_before(clause, start) or _phrase_in(_words_before(clause, start, 3), _DOWN_BEFORE)


def turned_down_after(clause: str, end: int) -> bool:
    """Whether the words after a fact call it unlikely or disown it ("... are unlikely", "... was cancelled")."""
    return bool(_DOWN_AFTER.match(clause[end:].strip()))


# A later clause that speaks of another moment (the retry, the second call, the fallback) reports how that went
_ANOTHER_MOMENT = re.compile(
    r"^(?:and |so |but )?(?:the (?:second|next|retry|later|new|other|fallback|re ?read|rebooking|resend)\w*|then|"
    r"after\w*|now|later|since then|on (?:the |a )?(?:retry|second)|a (?:second|retry)|once|when i|i )"
)


def denied_after(clauses: Sequence[str]) -> bool:
    """Whether one of these clauses (those after a statement, in its sentence) takes a statement of trouble back;
    a clause about another moment ("the second was normal") does not."""
    return any(_DENIAL.search(c) and not _ANOTHER_MOMENT.match(c.strip()) for c in clauses)


# ---------------------------------------------------------------------------------------------------------------
# Contrary states

_CONTRARY: list[tuple[frozenset[str], frozenset[str]]] = [
    (frozenset({"in stock", "available", "open", "has availability", "vacancy", "vacancies"}),
     frozenset({"out of stock", "sold out", "unavailable", "not available", "backordered", "back ordered", "closed",
                "fully booked", "no availability", "no vacancy", "out"})),
    (frozenset({"open", "opened"}), frozenset({"closed", "shut"})),
    (frozenset({"confirmed", "approved", "accepted", "completed", "complete", "paid", "succeeded", "successful"}),
     frozenset({"pending", "unconfirmed", "tentative", "cancelled", "canceled", "on hold", "declined", "rejected",
                "denied", "failed", "unpaid", "refunded", "incomplete", "processing", "outstanding", "overdue",
                "still due", "partially", "remains", "owed"})),
    (frozenset({"delivered", "arrived"}),
     frozenset({"in transit", "undelivered", "delayed", "out for delivery", "lost", "on the way", "shipped"})),
    (frozenset({"thunderstorms", "thunderstorm", "storms", "storm", "rain", "showers", "rainy", "wet", "thunder"}),
     frozenset({"sunny", "clear", "dry", "fair", "cloudless", "clear skies", "sunshine"})),
    (frozenset({"sunny", "clear", "dry", "sunshine", "clear skies"}),
     frozenset({"thunderstorms", "thunderstorm", "storms", "storm", "rain", "showers", "rainy", "wet"})),
    (frozenset({"active", "still active", "scheduled"}), frozenset({"cancelled", "canceled", "inactive", "expired"})),
    (frozenset({"cancelled", "canceled", "voided", "refunded"}),
     frozenset({"still active", "active", "went through", "completed", "still pending"})),
    (frozenset({"on time"}), frozenset({"delayed", "late", "cancelled", "canceled"})),
    (frozenset({"sent"}), frozenset({"draft", "unsent", "not sent", "bounced"})),
    (frozenset({"booked", "reserved"}),
     frozenset({"fully booked", "no availability", "waitlisted", "sold out", "expired", "declined", "cancelled",
                "canceled", "not booked", "fell through"})),
    (frozenset({"up", "rising", "gained", "higher"}), frozenset({"down", "falling", "fell", "lost", "lower"})),
    (frozenset({"down", "falling", "fell", "lower"}), frozenset({"up", "rising", "rose", "gained", "higher"})),
    (frozenset({"yes"}), frozenset({"no"})),
    (frozenset({"shipped"}), frozenset({"cancelled", "canceled", "not shipped", "processing", "not yet shipped"})),
    (frozenset({"on the calendar", "scheduled", "added"}), frozenset({"deleted", "removed", "declined"})),
    (frozenset({"nonstop", "direct flight"}), frozenset({"layover", "layovers", "connecting", "connection", "stops"})),
    (frozenset({"before", "earlier than", "ahead of"}), frozenset({"after", "later than"})),
    (frozenset({"after", "later than"}), frozenset({"before", "earlier than", "ahead of"})),
]  # fmt: skip


@lru_cache(maxsize=4096)
def phrase_pattern(phrase: str) -> re.Pattern[str]:
    """A phrase as whole words (compiled once: concepts and states recur in every answer)."""
    return re.compile(rf"(?<![\w]){re.escape(phrase)}(?![\w])")


def occurrences(text: str, phrase: str) -> list[int]:
    """Start offsets of a phrase in normalized text, as whole words."""
    return [m.start() for m in phrase_pattern(phrase).finditer(text)] if phrase in text else []


@dataclass(frozen=True)
class Contrary:
    """The states a concept asserts and the states that would contradict it."""

    states: frozenset[str]
    contrary: frozenset[str]


@lru_cache(maxsize=4096)
def contrary_of(concept: str) -> Contrary | None:
    """The contrary states of a normalized concept, when it asserts a state with known contraries."""
    states: set[str] = set()
    contrary: set[str] = set()
    for side, other in _CONTRARY:
        for state in side:
            spots = occurrences(concept, state)
            # "in stock" inside "out of stock" is not the state "in stock"
            if spots and not any(occurrences(concept, o) for o in other if state in o):
                states.add(state)
                contrary |= other
    contrary -= states
    return Contrary(frozenset(states), frozenset(contrary)) if states else None


def contradicts(contrary: Contrary, clause: str) -> bool:
    """Whether a normalized clause asserts a state contrary to the concept's (and not negated)."""
    for state in contrary.contrary:
        for at in occurrences(clause, state):
            # a longer state of the concept's own side that contains this one ("in stock" and "stock") wins
            if any(state in own and occurrences(clause, own) for own in contrary.states):
                continue
            if not negated_before(clause, at):
                return True
    return False


# States said in other words: one group each ("available" says "in stock"); a concept's state is stated by any
# member of its group
_EQUIVALENT_STATES: list[frozenset[str]] = [
    frozenset({"in stock", "available", "available to ship", "ready to ship", "has stock", "stocked"}),
    frozenset(
        {
            "out of stock",
            "sold out",
            "sells out",
            "sell out",
            "selling out",
            "backordered",
            "back ordered",
            "ran out",
            "run out",
            "none left",
            "nothing left",
        }
    ),
    frozenset({"open", "opened", "open now"}),
    frozenset({"closed", "shut"}),
    frozenset({"confirmed", "approved", "accepted"}),
    frozenset({"cancelled", "canceled", "voided", "called off", "revoked"}),
    frozenset({"delivered", "arrived", "dropped off"}),
    frozenset({"thunderstorms", "thunderstorm", "storms", "storm", "thunder", "stormy"}),
    frozenset({"rain", "showers", "rainy", "raining", "wet weather"}),
    frozenset({"sunny", "clear skies", "sunshine"}),
    frozenset({"emailed", "mailed", "sent the email", "sent an email", "sent by email", "sent it by email"}),
    frozenset({"on time", "on schedule", "as scheduled", "no delays", "no delay", "not delayed"}),
    frozenset({"bark", "crust"}),  # a barbecue's outer crust
    frozenset({"shipped", "on its way", "picked up", "in transit", "sent out", "dispatched"}),
    frozenset(
        {
            "pet friendly",
            "pets allowed",
            "pets are allowed",
            "pets welcome",
            "pets are welcome",
            "dogs welcome",
            "dogs are welcome",
            "dogs allowed",
            "dogs are allowed",
            "allows pets",
            "allows dogs",
        }
    ),
    frozenset({"nonstop", "non stop", "direct flight", "no layovers", "no layover", "no stops", "straight through"}),
    frozenset({"placed", "ordered", "accepted", "went through", "submitted", "is in your orders"}),
    frozenset({"booked", "requested", "dispatched", "on the way", "on its way", "reserved"}),
    frozenset({"held", "holds", "kept", "unchanged", "steady", "paused", "left"}),
    frozenset({"cheapest", "lowest price", "lowest priced", "least expensive", "lowest rate", "cheapest option"}),
    frozenset({"refunded", "refund issued", "refund posted", "money back", "refund went through", "refund was issued"}),
    frozenset({"delayed", "running late", "late"}),
]


def equivalent_states(concept: str) -> list[tuple[str, frozenset[str]]]:
    """The states a normalized concept names, each with the phrases that say it."""
    return [(state, group) for group in _EQUIVALENT_STATES for state in group if occurrences(concept, state)]
