"""The built-in smoke suite: a company database the project generates itself, and questions over it.

Every scenario can be solved by two tool-disjoint plans (a direct call, or a lookup chained into a list-taking
tool), so ``first_tried`` always leaves a working backup and ``impossible`` (all solution tools down) leaves none.
Everything is deterministic: the same code builds the same bytes.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from undertow.env_core.families import ReportTable, SuiteConfig
from undertow.env_core.model import ArgRef, Gold, PlannedCall, Scenario, ToolSpec
from undertow.env_core.smoke.tools import TOOLS
from undertow.env_core.suites import write_suite
from undertow.env_core.tools import MAIN, SqliteToolBox

FAMILY = "smoke"
SUITE_VERSION = "1"

_DEPARTMENTS = [
    ("Engineering", "Berlin"),
    ("Sales", "Lisbon"),
    ("Marketing", "Oslo"),
    ("Finance", "Zurich"),
    ("Support", "Dublin"),
    ("Research", "Kyoto"),
    ("Legal", "Austin"),
    ("Operations", "Dublin"),
]
_FIRST = [
    "Maria",
    "Kofi",
    "Ines",
    "Tomasz",
    "Aiko",
    "Rahul",
    "Lena",
    "Diego",
    "Sofia",
    "Emeka",
    "Hana",
    "Pavel",
    "Noor",
    "Jonas",
    "Leila",
    "Mateo",
    "Yuki",
    "Amara",
    "Erik",
    "Priya",
]
_LAST = [
    "Okafor",
    "Silva",
    "Novak",
    "Tanaka",
    "Mehta",
    "Schmidt",
    "Garcia",
    "Haddad",
    "Larsen",
    "Kim",
    "Moreau",
    "Ivanova",
    "Adeyemi",
    "Rossi",
    "Chen",
]
_PROJECTS = [
    "Apollo",
    "Borealis",
    "Cinder",
    "Delta",
    "Ember",
    "Fjord",
    "Granite",
    "Helix",
    "Iris",
    "Juniper",
    "Kestrel",
    "Lumen",
    "Meridian",
    "Nimbus",
    "Orchid",
    "Pylon",
]
N_EMPLOYEES = 64
PER_TEMPLATE = 7


def build_database() -> sqlite3.Connection:
    """Create the company database in memory (8 departments, 64 employees, 16 projects, assignments)."""
    rng = random.Random(20261121)
    db = sqlite3.connect(":memory:", check_same_thread=False)
    db.executescript(
        """
        CREATE TABLE departments (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT NOT NULL);
        CREATE TABLE employees (
            id INTEGER PRIMARY KEY, first_name TEXT NOT NULL, last_name TEXT NOT NULL,
            department_id INTEGER NOT NULL REFERENCES departments(id), manager_id INTEGER REFERENCES employees(id),
            salary INTEGER NOT NULL, hire_year INTEGER NOT NULL);
        CREATE TABLE projects (
            id INTEGER PRIMARY KEY, name TEXT NOT NULL, department_id INTEGER NOT NULL REFERENCES departments(id),
            budget INTEGER NOT NULL);
        CREATE TABLE assignments (
            employee_id INTEGER NOT NULL REFERENCES employees(id), project_id INTEGER NOT NULL REFERENCES projects(id),
            hours INTEGER NOT NULL, PRIMARY KEY (employee_id, project_id));
        """
    )
    db.executemany("INSERT INTO departments VALUES (?, ?, ?)", [(i + 1, n, c) for i, (n, c) in enumerate(_DEPARTMENTS)])
    names = rng.sample([(f, last) for f in _FIRST for last in _LAST], N_EMPLOYEES)
    heads: dict[int, int] = {}  # department -> head's employee id
    leads: dict[int, list[int]] = {}  # department -> team leads
    rows = []
    for i, (first, last) in enumerate(names):
        emp_id = i + 1
        dept = i % len(_DEPARTMENTS) + 1
        if dept not in heads:
            heads[dept], manager, salary = emp_id, None, rng.randrange(140, 200) * 1000
        elif len(leads.setdefault(dept, [])) < 1:
            leads[dept].append(emp_id)
            manager, salary = heads[dept], rng.randrange(100, 140) * 1000
        else:
            manager = rng.choice([heads[dept], *leads[dept]])
            salary = rng.randrange(45, 110) * 1000
        rows.append((emp_id, first, last, dept, manager, salary, rng.randrange(2008, 2026)))
    db.executemany("INSERT INTO employees VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    projects = [
        (i + 1, name, i % len(_DEPARTMENTS) + 1, rng.randrange(20, 400) * 1000) for i, name in enumerate(_PROJECTS)
    ]
    db.executemany("INSERT INTO projects VALUES (?, ?, ?, ?)", projects)
    assignments = []
    for emp_id, _, _, dept, *_ in rows:
        own = [p[0] for p in projects if p[2] == dept]
        for project in rng.sample(own, rng.choice([1, 2])):
            assignments.append((emp_id, project, rng.choice([4, 8, 12, 16, 20])))
    db.executemany("INSERT INTO assignments VALUES (?, ?, ?)", assignments)
    db.commit()
    return db


def _ref(field: str) -> ArgRef:
    return ArgRef(from_call=0, field=field, many=True)


def build_scenarios(toolbox: SqliteToolBox) -> list[Scenario]:
    """Five question templates, seven instances each; instances with an empty or >100-row answer are dropped."""
    rng = random.Random(7)
    visible = [t.name for t in TOOLS]

    managers = [
        (r["first_name"], r["last_name"])
        for r in toolbox.query(
            "SELECT DISTINCT m.first_name, m.last_name FROM employees e JOIN employees m ON e.manager_id = m.id"
            " ORDER BY m.id"
        )
    ]
    cities = [r["city"] for r in toolbox.query("SELECT DISTINCT city FROM departments ORDER BY id")]
    departments = [r["name"] for r in toolbox.query("SELECT name FROM departments ORDER BY id")]
    projects = [r["name"] for r in toolbox.query("SELECT name FROM projects ORDER BY id")]

    # (template, question, one-call tool, the two-call plan's lookup tool and second tool, the field the lookup
    # hands on, the second call's argument name, the values asked about); one call answers a question, or a
    # lookup and a second call over the looked-up ids
    Template = tuple[str, str, str, str, str, ArgRef, str, list[dict[str, Any]]]
    templates: list[Template] = [
        (
            "reports",
            "What are the ids, names and salaries of the employees who report to {first_name} {last_name}?",
            "reports_with_salary_by_manager_name",
            "find_employee_ids",
            "list_reports_with_salary",
            _ref("employee_id"),
            "manager_ids",
            [{"first_name": f, "last_name": la} for f, la in rng.sample(managers, min(PER_TEMPLATE, len(managers)))],
        ),
        (
            "city_projects",
            "Which projects, with their budgets, belong to departments located in {city}?",
            "projects_in_city",
            "find_department_ids_by_city",
            "list_projects_by_department_ids",
            _ref("department_id"),
            "department_ids",
            [{"city": c} for c in rng.sample(cities, min(PER_TEMPLATE, len(cities)))],
        ),
        (
            "budget",
            "What is the total budget of all projects owned by the {name} department?",
            "total_budget_by_department_name",
            "find_department_ids_by_name",
            "total_budget_by_department_ids",
            _ref("department_id"),
            "department_ids",
            [{"name": n} for n in rng.sample(departments, PER_TEMPLATE)],
        ),
        (
            "project_staff",
            "Who works on the {name} project, and for how many hours a week?",
            "staff_on_project_by_name",
            "find_project_ids_by_name",
            "staff_on_project_ids",
            _ref("project_id"),
            "project_ids",
            [{"name": n} for n in rng.sample(projects, PER_TEMPLATE)],
        ),
        (
            "above_average",
            "Which employees (ids, names and salaries) earn more than the average salary of the {name} department?",
            "employees_above_department_average",
            "average_salary_by_department_name",
            "employees_paid_above",
            ArgRef(from_call=0, field="average_salary"),
            "min_salary",
            [{"name": n} for n in rng.sample(departments, PER_TEMPLATE)],
        ),
    ]
    instances: list[tuple[str, str, str, dict[str, Any], list[list[PlannedCall]]]] = [
        (
            template,
            question.format(**arguments),
            tool,
            arguments,
            [
                [PlannedCall(tool=tool, arguments=arguments)],
                [PlannedCall(tool=lookup, arguments=arguments), PlannedCall(tool=second, arguments={name: handed})],
            ],
        )
        for template, question, tool, lookup, second, handed, name, asked in templates
        for arguments in asked
    ]

    scenarios = []
    counters: dict[str, int] = {}
    for template, task, direct, arguments, plans in instances:
        gold_rows = toolbox.query(toolbox.specs[direct].binding["sql"], arguments)
        if not gold_rows or len(gold_rows) > 100 or all(v is None for v in gold_rows[0].values()):
            continue
        counters[template] = counters.get(template, 0) + 1
        scenarios.append(
            Scenario(
                id=f"smoke-{template}-{counters[template]:02d}",
                family=FAMILY,
                task=task,
                tools=visible,
                gold=Gold(answer=gold_rows, plans=plans),
                metadata={"template": template},
            )
        )
    return scenarios


class SmokeSuite(SuiteConfig):
    """The smoke suite has no source data: the project generates it."""

    family: Literal["smoke"] = "smoke"


def source_digest(config: SuiteConfig) -> str:
    """The suite is generated by this code: its version is its content."""
    return f"{FAMILY}-v{SUITE_VERSION}"


def build(config: SuiteConfig, out: Path) -> list[ReportTable]:
    """Write the generated suite as a folder."""
    database = build_database()
    scenarios = build_scenarios(SqliteToolBox(TOOLS, database))
    write_suite(
        out,
        name=FAMILY,
        family=FAMILY,
        version=SUITE_VERSION,
        tools=TOOLS,
        scenarios=scenarios,
        databases={MAIN: database},
    )
    table = ReportTable(title=f"{FAMILY} build", columns=["what", "count"], right=[False, True])
    table.rows = [["tools", str(len(TOOLS))], ["scenarios", str(len(scenarios))]]
    return [table]


def toolbox(specs: list[ToolSpec], databases: Mapping[str, Path]) -> SqliteToolBox:
    return SqliteToolBox(specs, databases)
