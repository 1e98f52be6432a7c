"""The prompts of the agent protocols: the default ones, built from sentences so that ``failure_advice: false`` and
``give_up_marker: false`` can drop theirs, and the ``hohw`` preset (the Hell-or-High-Water paper's CodeAct prompt
structure, appendix E, in our own words and with our own examples). ``undertow.workers.agent`` puts them together."""

from __future__ import annotations

# one marker for models and the built-in policies alike
from undertow.env_core.plans import GIVE_UP_MARKER as GIVE_UP_MARKER

# The default prompts are built from sentences so that ``failure_advice: false`` and ``give_up_marker: false`` can
# drop theirs (``_trimmed``); with both unset each prompt is what it always was.
GIVE_UP_SENTENCE = (
    "If the task cannot be completed with the tools available, reply with a message that starts with "
    f"{GIVE_UP_MARKER}: and the reason."
)
ADVICE_SENTENCE = (
    "Tools can fail; read their errors and adapt: retry errors that say to retry, and look for another way when a "
    "tool is unavailable. "
)
SYSTEM_PROMPT = (
    f"You solve the user's task by calling the tools you are given. {ADVICE_SENTENCE}When you have the answer, reply "
    f"without a tool call and give the records the tools returned, as JSON. {GIVE_UP_SENTENCE}"
)

CODEACT_ADVICE_SENTENCE = (
    "Tools can fail: read the error and adapt, retry errors that say to retry, and look for another way when a "
    "function is unavailable. "
)
CODEACT_PROMPT = (
    "You solve the user's task with a Python environment in which tool functions are defined. Each turn, first "
    "think step by step inside <thought>...</thought>. Then either run code inside <execute>...</execute> and read "
    "its output in the next message, or, when you have the answer, assign it to a variable named `solution` inside "
    "<solution>...</solution> (for example <solution>solution = rows</solution>). Tools return lists of records "
    f"(JSON objects); print results to see them. {CODEACT_ADVICE_SENTENCE}Your solution should keep the values and "
    f"original keys the tools returned. {GIVE_UP_SENTENCE}\n\nAvailable functions:\n"
)

REACT_ADVICE_SENTENCE = "Tools can fail: read the errors and adapt. "
REACT_GIVE_UP_SENTENCE = (
    f"If the task cannot be completed with the tools available, write Final Answer: {GIVE_UP_MARKER}: and the reason."
)
REACT_PROMPT = (
    "Answer the user's question using the tools below. Use this format:\n"
    "Thought: what to do next\nAction: the tool's name\nAction Input: the arguments as a JSON object\n"
    "Then wait for the Observation. Repeat Thought/Action/Action Input as needed; when you know the answer, write\n"
    "Thought: I now know the final answer\nFinal Answer: the records the tools returned, as JSON.\n"
    f"{REACT_ADVICE_SENTENCE}{REACT_GIVE_UP_SENTENCE}\n\nTools (JSON schemas):\n"
)

DIRECT_GIVE_UP_SENTENCE = f"If the task cannot be done with these tools, reply {GIVE_UP_MARKER}: and the reason."
DIRECT_PROMPT = (
    "Answer the user's question with one sequence of tool calls. Reply with only a JSON list such as "
    '[{"name": "tool_a", "arguments": {"x": 1}, "label": "out1"}, {"name": "tool_b", "arguments": {"ids": '
    '"$out1.id$"}, "label": "out2"}]. Each call has a unique label; "$label.field$" passes the values of that field '
    "of an earlier call's result (one value if it returned one row, else a list). The result of the last call is "
    f"your answer. {DIRECT_GIVE_UP_SENTENCE}\n\n"
    "Tools (JSON schemas):\n"
)

# The "hohw" preset: the CodeAct prompt structure of the Hell-or-High-Water paper (appendix E) in our own words,
# with our own examples on an invented ferry timetable (no Spider database): thought / execute / solution turns,
# answers keyed as the functions returned them, two worked examples, full JSON definitions of the functions. It
# neither coaches recovery nor offers a give-up marker unless asked (failure_advice, give_up_marker).
HOHW_INTRO = (
    "You are an assistant that solves problems by writing Python in an interactive environment in which tool "
    "functions are defined.\n\n"
    "Each turn, first reason step by step inside <thought>...</thought>, for example <thought>I should look at the "
    "rows first</thought>. Then do one of two things:\n"
    "1) run Python code inside <execute>...</execute>, for example <execute>print(rows)</execute>; what it prints "
    "comes back in the next message;\n"
    "2) once you have found the answer, assign it to a variable named `solution` inside <solution>...</solution>, "
    "for example <solution>solution = rows</solution>; this ends the task.\n\n"
    "Your solution is checked against what the functions return: keep the values and the original keys of the "
    "records they gave you.\n"
    "Every function returns a list of JSON records, which you may need to post-process; print a result to see how it "
    "is structured.\n"
)
HOHW_ADVICE = (
    "Functions can fail: read the error, retry when it says to retry, and when a function is unavailable look for "
    "another way to get the same data.\n"
)
HOHW_EXAMPLES_INTRO = (
    "\nTwo worked examples follow. They use a ferry timetable database that has nothing to do with your task, and "
    "their function definitions are left out.\n"
)
# Both versions of example 1 end the same way: the KeyError, a look at the records, the answer.
_VESSELS_KEY_ERROR = """Observation:
Traceback (most recent call last):
  Cell In[N], line 2
    names = [row['vessel'] for row in rows]
  Cell In[N], line 2, in <listcomp>
    names = [row['vessel'] for row in rows]
KeyError: 'vessel'
Assistant:
<thought>The records have no key 'vessel'. I will print them to see which keys they have.</thought>
<execute>
print(rows)
</execute>
Observation:
[{'vessel_name': 'Marsh Wren'}, {'vessel_name': 'Sea Holly'}]
Assistant:
<thought>The rows already hold the answer under their original key, so I return them unchanged.</thought>
<solution>
solution = rows
</solution>"""


def _vessels_key_error(cell: int) -> str:
    return _VESSELS_KEY_ERROR.replace("In[N]", f"In[{cell}]")


HOHW_CLOSED_EXAMPLES = (
    """Example 1:
Task: Which vessels sail to Kestrel Island?
Assistant:
<thought>function_52 returns the vessels serving a destination. I will call it for Kestrel Island and collect the \
names.</thought>
<execute>
rows = function_52('Kestrel Island')
names = [row['vessel'] for row in rows]
print(names)
</execute>
"""
    + _vessels_key_error(cell=1),
    """Example 2:
Task: When does the first sailing leave on the route with the longest crossing?
Assistant:
<thought>function_17 gives the longest crossing time, and function_18 the earliest departure on routes with a \
given crossing time. I start with function_17.</thought>
<execute>
longest = function_17()
print(longest)
</execute>
Observation:
[{'MAX(crossing_minutes)': 95}]
Assistant:
<thought>Now I pass that number to function_18.</thought>
<execute>
first = function_18(longest['MAX(crossing_minutes)'])
print(first)
</execute>
Observation:
Traceback (most recent call last):
  Cell In[2], line 1
    first = function_18(longest['MAX(crossing_minutes)'])
TypeError: list indices must be integers or slices, not str
Assistant:
<thought>The result is a list of records: I must take its first record before reading the key.</thought>
<execute>
first = function_18(longest[0]['MAX(crossing_minutes)'])
print(first)
</execute>
Observation:
[{'MIN(departs)': '06:40'}]
Assistant:
<thought>The first sailing on that route leaves at 06:40.</thought>
<solution>
solution = first
</solution>""",
)
HOHW_OPEN_EXAMPLES = (
    """Example 1:
Task: Which vessels sail to Kestrel Island?
Assistant:
<thought>No function for this is defined yet, so I search for one about vessels and destinations.</thought>
<execute>
print(search_tools(query='vessels sailing to a destination', num_results=3))
</execute>
Observation:
[{'name': 'function_52', 'description': 'Get the names of the vessels that sail to a given destination.'}, \
{'name': 'function_31', 'description': 'Get the number of vessels in the fleet.'}, {'name': 'function_8', \
'description': 'Get the destinations served by a given vessel.'}]
Assistant:
<thought>function_52 fits. I read its documentation to learn its arguments.</thought>
<execute>
print(get_info(tool_name='function_52'))
</execute>
Observation:
{'name': 'function_52', 'description': 'Get the names of the vessels that sail to a given destination.', \
'parameters': {'type': 'object', 'properties': {'delta_kilo': {'type': 'string', 'description': 'the destination'}}, \
'required': ['delta_kilo']}}
Assistant:
<thought>I call function_52 with delta_kilo set to Kestrel Island and collect the names.</thought>
<execute>
rows = function_52(delta_kilo='Kestrel Island')
names = [row['vessel'] for row in rows]
print(names)
</execute>
"""
    + _vessels_key_error(cell=3),
    """Example 2:
Task: When does the first sailing leave on the route with the longest crossing?
Assistant:
<thought>I need the longest crossing time, then the earliest departure on that route. I search for functions \
about crossing times.</thought>
<execute>
print(search_tools(query='longest crossing time of a route', num_results=2))
</execute>
Observation:
[{'name': 'function_17', 'description': 'Get the longest crossing time of any route, in minutes.'}, \
{'name': 'function_18', 'description': 'Get the earliest departure time on routes with a given crossing time.'}]
Assistant:
<thought>function_17 and then function_18 answer the task. I read the documentation of function_18, which takes \
an argument.</thought>
<execute>
print(get_info(tool_name='function_18'))
</execute>
Observation:
{'name': 'function_18', 'description': 'Get the earliest departure time on routes with a given crossing time.', \
'parameters': {'type': 'object', 'properties': {'sigma_tango': {'type': 'number', 'description': 'the crossing time \
in minutes'}}, 'required': ['sigma_tango']}}
Assistant:
<thought>I call function_17, then pass its value to function_18.</thought>
<execute>
longest = function_17()
first = function_18(sigma_tango=longest['MAX(crossing_minutes)'])
print(first)
</execute>
Observation:
Traceback (most recent call last):
  Cell In[3], line 2
    first = function_18(sigma_tango=longest['MAX(crossing_minutes)'])
TypeError: list indices must be integers or slices, not str
Assistant:
<thought>function_17 returned a list of records: I must take its first record before reading the key.</thought>
<execute>
first = function_18(sigma_tango=longest[0]['MAX(crossing_minutes)'])
print(first)
</execute>
Observation:
[{'MIN(departs)': '06:40'}]
Assistant:
<thought>The first sailing on that route leaves at 06:40.</thought>
<solution>
solution = first
</solution>""",
)
HOHW_CLOSED_TOOLS = "\nThe functions you can use for this task (JSON definitions, one per line):\n"
HOHW_OPEN_TOOLS = (
    "\nAt the start only two functions are defined. Use them to find the others (search_tools) and to read a "
    "function's documentation (get_info); every function they show you can then be called:\n"
)


# ---------------------------------------------------------------------------------------------------------------
# The assistant preset (Failing Tools: a bare function-calling assistant acting for a user), and the harness layers
# of that paper's Table 2, each added on its own by a setting's ``harness``. Our own wording and invented APIs.

ASSISTANT_PROMPT = (
    "You are an assistant that acts for the user through the tools you are given. Carry out the user's request "
    "with tool calls. When you are done, reply to the user without a tool call, saying what you did and what you "
    "found."
)

HARNESS_PREAMBLE = (
    "Operating rules:\n"
    "1. Treat every tool result as evidence that may be wrong: check it against the request and against itself "
    "(amounts, dates, totals, counts) before you rely on it.\n"
    "2. After any call that changes something (a booking, a payment, a saved item, a message), read the state back "
    "with a tool that shows it, and only report success once the read-back shows it.\n"
    "3. If a call fails with an error that says to retry (a timeout, a rate limit, a 503), retry it; if it keeps "
    "failing or the failure is permanent, use another provider that offers the same function.\n"
    "4. Do not act on data that is stale, corrupted or impossible; say what is wrong instead, and tell the user "
    "plainly what is done, what is not, and what remains uncertain."
)

HARNESS_FEW_SHOT = (
    "Three worked examples on other APIs:\n\n"
    "Example 1 (a write that did not land). User: Add oat milk to my pantry list.\n"
    'Call pantrypal_add_item(item="oat milk") -> {"status": "added"}\n'
    'Call pantrypal_get_list() -> {"items": ["rice", "lentils"]}\n'
    "The read-back does not show oat milk, so the add did not persist. "
    'Call pantrypal_add_item(item="oat milk") -> {"status": "added"}\n'
    'Call pantrypal_get_list() -> {"items": ["rice", "lentils", "oat milk"]}\n'
    "Reply: Oat milk is on your pantry list now; the first save did not go through, so I added it again and "
    "checked the list.\n\n"
    "Example 2 (a failure that clears). User: What time does the Harbor Line ferry leave tomorrow?\n"
    'Call tidewater_get_departures(route="Harbor Line") -> {"error": "503 Service Unavailable, please retry"}\n'
    'Call tidewater_get_departures(route="Harbor Line") -> {"departures": ["07:40", "09:10"]}\n'
    "Reply: The first Harbor Line ferry tomorrow leaves at 07:40 (then 09:10); the timetable service was briefly "
    "down and answered on a retry.\n\n"
    "Example 3 (stale data). User: Is the Copper Ridge trail open today?\n"
    'Call trailhub_get_status(trail="Copper Ridge") -> {"status": "open", "generated_at": "six days ago", '
    '"_stale_warning": "cached data"}\n'
    "The status is six days old, so I checked the other provider. "
    'Call parkwatch_get_status(trail="Copper Ridge") -> {"status": "closed: rockfall"}\n'
    "Reply: Copper Ridge is closed today because of a rockfall, according to current park data; TrailHub still "
    "shows it open, but its data is six days old."
)

# FAIL-TaLMs' awareness questions (appendix C.2), asked before the agent acts under a setting with ``awareness``: our
# own wording of their structure — weigh your own knowledge, the tools, or both; answer Yes, IDK or No first, then a
# short reason; No means the task is skipped. The opening sentence is how the built-in policies recognize the
# question.
AWARENESS_OPENING = "Before you act on the request below, judge whether you can see it through."
_AWARENESS_COMMON = (
    "Weigh three ways of getting there: what you already know about the world, what the available tools can do, and "
    "the two together. Answer Yes if one of them gets you {what}; IDK if you are not sure but are willing to try; "
    "No if none of them can, in which case the request is skipped and you will not attempt it. Begin your reply with "
    "Yes, IDK or No, then give your reason in a sentence or two."
)
AWARENESS_SYSTEM = {
    "info": f"{AWARENESS_OPENING} {_AWARENESS_COMMON.format(what='all the information the request needs')}",
    "tool": f"{AWARENESS_OPENING} {_AWARENESS_COMMON.format(what='the answer (you have the tools it takes)')}",
}
AWARENESS_QUESTION = {
    "info": "Do you have, or can you gather or infer, all the information needed to answer this request?",
    "tool": "Do you have the right tools (or the knowledge) to complete this request?",
}
AWARENESS_PROMPT = "{question}\n\nRequest: {query}\n\nAvailable tools: {functions}"
AWARENESS_REMINDER = "Please begin your reply with Yes, IDK or No."


# ---------------------------------------------------------------------------------------------------------------
# Error feedback and decoupled generation (FUXI §3.2, Figure 2; the prompt structure of its Appendix C, Figures C.2
# and C.3, in our own words, with our own examples on an invented knowledge base about ferries).

# Follows the error of a failed action when ``error_feedback`` is on (Figure 2(a)): the error, then a prompt to retry.
ERROR_FEEDBACK = (
    "That action did not succeed. Read the error above, then try again with a corrected action (or the same one, "
    "if the error says to retry)."
)

# The main context of decoupled generation (Figure C.2's structure: instructions, the tools, how variables and the
# answer are written, one demonstration). ``{tools}`` becomes one line per tool and ``{max_turns}`` the step budget.
DECOUPLED_PROMPT = """You answer questions from the facts stored in a knowledge base, which you explore one step at a \
time with these tools:
{tools}

Tools that find entities put them in a variable: a set of entities named by a number in the order the variables \
are made, #0 for the first, #1 for the second, and so on. A later tool takes a variable's name (such as #2) or the \
name of an entity the question gives.

Take ONE step at a time. Each step, write only your next thought, after "Thought:": what you want to find out, and \
which tool you mean to use on which variable or entity, with which relation or attribute. Do not write the action \
yourself: it is chosen for you, from the actions the knowledge base allows at this point, to match your thought, and \
you then read its Observation. You have at most {max_turns} steps.

After each new variable, judge whether it answers the question. When one does, reply "Final Answer: #id" with that \
variable's name: if #3 holds the answer, reply Final Answer: #3. An answer that is a number (a count) is given as the \
number. When no action is possible any more, you must give your Final Answer.

One demonstration, on another knowledge base:

Question: Which harbours do the ferries call at that were built at Gullwing Yard and are run by Tern Lines?
Entities: [Gullwing Yard, Tern Lines]

Thought: First I need the ferries built at Gullwing Yard, so I look at the relations that start at the entity \
'Gullwing Yard'.
Action: get_relations(Gullwing Yard)
Observation: ["shipyard.ferries_built", "shipyard.located_in"]

Thought: shipyard.ferries_built leads from Gullwing Yard to the ferries it built; I follow it.
Action: get_neighbors(Gullwing Yard, shipyard.ferries_built)
Observation: "variable #0, which are instances of ferry (4 entities)"

Thought: Next I need the ferries that Tern Lines runs, so I look at the relations of the entity 'Tern Lines'.
Action: get_relations(Tern Lines)
Observation: ["operator.ferries_run", "operator.head_office"]

Thought: operator.ferries_run leads from Tern Lines to its ferries; I follow it.
Action: get_neighbors(Tern Lines, operator.ferries_run)
Observation: "variable #1, which are instances of ferry (6 entities)"

Thought: The ferries both built at Gullwing Yard and run by Tern Lines are the intersection of #0 and #1.
Action: intersection(#0, #1)
Observation: "variable #2, which are instances of ferry (2 entities)"

Thought: Now I need the harbours these ferries call at, so I look at the relations of #2.
Action: get_relations(#2)
Observation: ["ferry.built_at", "ferry.calls_at", "ferry.run_by"]

Thought: ferry.calls_at leads from the ferries of #2 to the harbours they call at; I follow it.
Action: get_neighbors(#2, ferry.calls_at)
Observation: "variable #3, which are instances of harbour (3 entities)"

Thought: #3 holds the harbours those ferries call at, which is what the question asks.
Final Answer: #3
"""

# The separate request that turns a thought into an action (Figure C.3's structure). Its first sentence is how the
# built-in policies recognize it.
DECOUPLED_CHOICE_OPENING = "You are given a thought and a list of candidate actions."
DECOUPLED_CHOICE_PROMPT = f"""{DECOUPLED_CHOICE_OPENING} Pick the one action that carries out the thought.

Each action is labelled with letters. Reply with the label of the action you pick, not with the action itself, in the \
form "My choice: x", for example My choice: b.

Three examples, on a knowledge base about ferries:

Example 1
Thought: First I need the ferries built at Gullwing Yard, so I look at the relations that start at the entity \
'Gullwing Yard'.
Candidate actions:
a. get_relations(Tern Lines)
b. get_relations(Gullwing Yard)
Make a choice from a, b.
My choice: b

Example 2
Thought: shipyard.ferries_built leads from Gullwing Yard to the ferries it built; I follow it.
Candidate actions:
a. get_neighbors(Gullwing Yard, shipyard.located_in)
b. get_neighbors(Gullwing Yard, shipyard.ferries_built)
c. get_relations(Tern Lines)
Make a choice from a, b, c.
My choice: b

Example 3
Thought: The ferries both built at Gullwing Yard and run by Tern Lines are the intersection of #0 and #1.
Candidate actions:
a. get_relations(#0)
b. get_relations(#1)
c. intersection(#0, #1)
d. get_attributes(#0)
e. count(#1)
Make a choice from a, b, c, d, e.
My choice: c"""
DECOUPLED_CHOICE_REQUEST = "Thought: {thought}\nCandidate actions:\n{candidates}\nMake a choice from {labels}."
DECOUPLED_CHOICE_REMINDER = 'Reply with "My choice: " followed by one of the labels {labels}, and nothing else.'
# What the main context reads when a step took no action.
DECOUPLED_NO_ACTION = "No action is possible at this point. Give your Final Answer now."
DECOUPLED_NOT_CHOSEN = (
    "No action could be chosen for that thought. Write your next thought again, naming the tool you mean to use "
    "and what to use it on."
)
