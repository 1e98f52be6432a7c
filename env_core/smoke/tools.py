"""The smoke family's tools: parameterized SQL over the generated company database.

They come in pairs of disjoint paths to the same rows: a *direct* tool that answers a question in one call, and a
*chain* of a lookup tool whose output feeds a list-taking tool. Both paths select the same columns, so their
results are identical.
"""

from __future__ import annotations

from typing import Any

from undertow.env_core.model import ToolSpec


def _tool(tool_name: str, description: str, sql: str, /, **params: tuple[str, str]) -> ToolSpec:
    """``params`` maps argument name -> (JSON schema type or 'int_list', description)."""
    properties: dict[str, Any] = {}
    for arg, (kind, text) in params.items():
        if kind == "int_list":
            properties[arg] = {"type": "array", "items": {"type": "integer"}, "description": text}
        else:
            properties[arg] = {"type": kind, "description": text}
    schema = {"type": "object", "properties": properties, "required": list(params), "additionalProperties": False}
    return ToolSpec(name=tool_name, description=description, parameters=schema, binding={"sql": " ".join(sql.split())})


_STAFF_COLUMNS = "e.id AS employee_id, e.first_name, e.last_name, e.salary"

TOOLS: list[ToolSpec] = [
    # Reports of a manager.
    _tool(
        "find_employee_ids",
        "Look up the ids of employees with the given first and last name.",
        "SELECT id AS employee_id FROM employees WHERE first_name = :first_name AND last_name = :last_name",
        first_name=("string", "first name of the employee"),
        last_name=("string", "last name of the employee"),
    ),
    _tool(
        "list_reports_with_salary",
        "List the employees (id, name, salary) whose manager is one of the given employee ids.",
        f"SELECT {_STAFF_COLUMNS} FROM employees e WHERE e.manager_id IN (SELECT value FROM json_each(:manager_ids))"
        " ORDER BY e.id",
        manager_ids=("int_list", "employee ids of the managers"),
    ),
    _tool(
        "reports_with_salary_by_manager_name",
        "List the employees (id, name, salary) who report to the manager with the given first and last name.",
        f"SELECT {_STAFF_COLUMNS} FROM employees e JOIN employees m ON e.manager_id = m.id"
        " WHERE m.first_name = :first_name AND m.last_name = :last_name ORDER BY e.id",
        first_name=("string", "first name of the manager"),
        last_name=("string", "last name of the manager"),
    ),
    # Projects of the departments in a city.
    _tool(
        "find_department_ids_by_city",
        "Look up the ids of the departments located in a city.",
        "SELECT id AS department_id FROM departments WHERE city = :city",
        city=("string", "city name"),
    ),
    _tool(
        "list_projects_by_department_ids",
        "List the projects (name and budget) owned by any of the given departments.",
        "SELECT p.name AS project, p.budget FROM projects p"
        " WHERE p.department_id IN (SELECT value FROM json_each(:department_ids)) ORDER BY p.id",
        department_ids=("int_list", "department ids"),
    ),
    _tool(
        "projects_in_city",
        "List the projects (name and budget) owned by departments located in a city.",
        "SELECT p.name AS project, p.budget FROM projects p JOIN departments d ON p.department_id = d.id"
        " WHERE d.city = :city ORDER BY p.id",
        city=("string", "city name"),
    ),
    # Budget of a department.
    _tool(
        "find_department_ids_by_name",
        "Look up the ids of the departments with the given name.",
        "SELECT id AS department_id FROM departments WHERE name = :name",
        name=("string", "department name"),
    ),
    _tool(
        "total_budget_by_department_ids",
        "Sum the budgets of all projects owned by the given departments.",
        "SELECT SUM(budget) AS total_budget FROM projects"
        " WHERE department_id IN (SELECT value FROM json_each(:department_ids))",
        department_ids=("int_list", "department ids"),
    ),
    _tool(
        "total_budget_by_department_name",
        "Sum the budgets of all projects owned by the department with the given name.",
        "SELECT SUM(p.budget) AS total_budget FROM projects p JOIN departments d ON p.department_id = d.id"
        " WHERE d.name = :name",
        name=("string", "department name"),
    ),
    # Staff of a project.
    _tool(
        "find_project_ids_by_name",
        "Look up the ids of the projects with the given name.",
        "SELECT id AS project_id FROM projects WHERE name = :name",
        name=("string", "project name"),
    ),
    _tool(
        "staff_on_project_ids",
        "List the employees (name and weekly hours) assigned to any of the given projects.",
        "SELECT e.first_name, e.last_name, a.hours FROM assignments a JOIN employees e ON a.employee_id = e.id"
        " WHERE a.project_id IN (SELECT value FROM json_each(:project_ids)) ORDER BY e.id",
        project_ids=("int_list", "project ids"),
    ),
    _tool(
        "staff_on_project_by_name",
        "List the employees (name and weekly hours) assigned to the project with the given name.",
        "SELECT e.first_name, e.last_name, a.hours FROM assignments a JOIN employees e ON a.employee_id = e.id"
        " JOIN projects p ON a.project_id = p.id WHERE p.name = :name ORDER BY e.id",
        name=("string", "project name"),
    ),
    # Employees paid above a department's average.
    _tool(
        "average_salary_by_department_name",
        "Compute the average salary of the employees of the department with the given name.",
        "SELECT AVG(e.salary) AS average_salary FROM employees e JOIN departments d ON e.department_id = d.id"
        " WHERE d.name = :name",
        name=("string", "department name"),
    ),
    _tool(
        "employees_paid_above",
        "List all employees (id, name, salary) whose salary is strictly greater than the given amount.",
        f"SELECT {_STAFF_COLUMNS} FROM employees e WHERE e.salary > :min_salary ORDER BY e.id",
        min_salary=("number", "salary threshold"),
    ),
    _tool(
        "employees_above_department_average",
        "List all employees (id, name, salary) paid more than the average salary of the department with the"
        " given name.",
        f"SELECT {_STAFF_COLUMNS} FROM employees e WHERE e.salary > (SELECT AVG(x.salary) FROM employees x"
        " JOIN departments d ON x.department_id = d.id WHERE d.name = :name) ORDER BY e.id",
        name=("string", "department name"),
    ),
]
