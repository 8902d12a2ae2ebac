// What a PromQL expression asks of the metrics it reads: the metric names of its selectors, their
// label matchers, and the labels it groups or matches by (`by`, `without`, `on`, `ignoring`,
// `group_left`, `group_right`). Enough of PromQL for the shipped rules and dashboard
// (exported-metrics.test.ts checks those against what the processes export); anything it does not
// understand is an error, never silently skipped.

export interface Matcher {
  label: string;
  op: "=" | "!=" | "=~" | "!~";
  value: string;
}

export interface Selector {
  metric: string;
  matchers: Matcher[];
}

export interface ExpressionParts {
  selectors: Selector[];
  /** Labels named by by/without/on/ignoring/group_left/group_right. */
  grouping: string[];
  functions: string[];
}

/** Functions and aggregation operators of PromQL (Prometheus 2.x). */
export const PROMQL_FUNCTIONS = new Set([
  // aggregation operators
  "sum",
  "min",
  "max",
  "avg",
  "group",
  "stddev",
  "stdvar",
  "count",
  "count_values",
  "bottomk",
  "topk",
  "quantile",
  // functions
  "abs",
  "absent",
  "absent_over_time",
  "ceil",
  "changes",
  "clamp",
  "clamp_max",
  "clamp_min",
  "day_of_month",
  "day_of_week",
  "day_of_year",
  "days_in_month",
  "delta",
  "deriv",
  "exp",
  "floor",
  "histogram_quantile",
  "holt_winters",
  "hour",
  "idelta",
  "increase",
  "irate",
  "label_join",
  "label_replace",
  "ln",
  "log2",
  "log10",
  "minute",
  "month",
  "predict_linear",
  "rate",
  "resets",
  "round",
  "scalar",
  "sgn",
  "sort",
  "sort_desc",
  "sqrt",
  "time",
  "timestamp",
  "vector",
  "year",
  "avg_over_time",
  "min_over_time",
  "max_over_time",
  "sum_over_time",
  "count_over_time",
  "quantile_over_time",
  "stddev_over_time",
  "stdvar_over_time",
  "last_over_time",
  "present_over_time",
]);

const GROUPING = new Set(["by", "without", "on", "ignoring", "group_left", "group_right"]);
const KEYWORDS = new Set(["and", "or", "unless", "bool", "offset", "atan2", "inf", "nan"]);

type Token =
  | { kind: "ident"; text: string }
  | { kind: "string"; text: string }
  | { kind: "number"; text: string }
  | { kind: "duration"; text: string }
  | { kind: "punct"; text: string };

const DURATION = /^(?:\d+(?:ms|[smhdwy]))+/;
const NUMBER = /^(?:0x[0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)/;
const IDENT = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const PUNCT = /^(?:=~|!~|!=|==|>=|<=|[-+*/%^(){}[\],=<>@:])/;

function tokenize(expr: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < expr.length) {
    const rest = expr.slice(i);
    const space = /^\s+/.exec(rest);
    if (space) {
      i += space[0].length;
      continue;
    }
    if (rest[0] === "#") {
      // A comment runs to the end of the line.
      const nl = rest.indexOf("\n");
      i += nl < 0 ? rest.length : nl;
      continue;
    }
    const quote = rest[0];
    if (quote === '"' || quote === "'" || quote === "`") {
      let j = 1;
      let text = "";
      while (j < rest.length && rest[j] !== quote) {
        if (rest[j] === "\\" && quote !== "`") {
          text += rest[j + 1] ?? "";
          j += 2;
        } else text += rest[j++];
      }
      if (j >= rest.length) throw new Error(`unterminated string in ${JSON.stringify(expr)}`);
      tokens.push({ kind: "string", text });
      i += j + 1;
      continue;
    }
    // A Grafana variable ($__rate_interval, $line) stands for a duration or a value.
    const variable = /^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?/.exec(rest);
    if (variable) {
      tokens.push({ kind: "duration", text: variable[0] });
      i += variable[0].length;
      continue;
    }
    const m =
      (DURATION.exec(rest) && { kind: "duration" as const, text: (DURATION.exec(rest) as RegExpExecArray)[0] }) ||
      (NUMBER.exec(rest) && { kind: "number" as const, text: (NUMBER.exec(rest) as RegExpExecArray)[0] }) ||
      (IDENT.exec(rest) && { kind: "ident" as const, text: (IDENT.exec(rest) as RegExpExecArray)[0] }) ||
      (PUNCT.exec(rest) && { kind: "punct" as const, text: (PUNCT.exec(rest) as RegExpExecArray)[0] });
    if (!m) throw new Error(`cannot read ${JSON.stringify(rest.slice(0, 20))} in ${JSON.stringify(expr)}`);
    tokens.push(m);
    i += m.text.length;
  }
  return tokens;
}

/** The selectors, grouping labels and functions of one PromQL expression. */
export function expressionParts(expr: string): ExpressionParts {
  const tokens = tokenize(expr);
  const parts: ExpressionParts = { selectors: [], grouping: [], functions: [] };
  const at = (k: number): Token | undefined => tokens[k];
  const isPunct = (t: Token | undefined, text: string) => t?.kind === "punct" && t.text === text;
  let i = 0;
  while (i < tokens.length) {
    const t = tokens[i] as Token;
    if (isPunct(t, "[")) {
      // A range or subquery: durations and a colon, nothing that names a metric.
      let j = i + 1;
      while (j < tokens.length && !isPunct(at(j), "]")) {
        const inner = at(j) as Token;
        if (inner.kind !== "duration" && !isPunct(inner, ":")) throw new Error(`unexpected ${inner.text} in a range of ${expr}`);
        j++;
      }
      if (j >= tokens.length) throw new Error(`unterminated range in ${expr}`);
      i = j + 1;
      continue;
    }
    if (isPunct(t, "{")) throw new Error(`a selector without a metric name is not supported: ${expr}`);
    if (t.kind !== "ident") {
      i++;
      continue;
    }
    const name = t.text;
    const next = at(i + 1);
    if (GROUPING.has(name)) {
      if (!isPunct(next, "(")) {
        // group_left / group_right may stand alone.
        if (name === "group_left" || name === "group_right") {
          i++;
          continue;
        }
        throw new Error(`${name} without a label list in ${expr}`);
      }
      let j = i + 2;
      while (!isPunct(at(j), ")")) {
        const label = at(j);
        if (label === undefined) throw new Error(`unterminated ${name} (…) in ${expr}`);
        if (label.kind === "ident") parts.grouping.push(label.text);
        else if (!isPunct(label, ",")) throw new Error(`unexpected ${label.text} in ${name} (…) of ${expr}`);
        j++;
      }
      i = j + 1;
      continue;
    }
    if (KEYWORDS.has(name.toLowerCase())) {
      i++;
      continue;
    }
    // `sum by (line) (…)`: an aggregation with its grouping before its argument.
    const groupedFirst = next?.kind === "ident" && (next.text === "by" || next.text === "without") && PROMQL_FUNCTIONS.has(name);
    if (isPunct(next, "(") || groupedFirst) {
      if (!PROMQL_FUNCTIONS.has(name)) throw new Error(`unknown function ${name} in ${expr}`);
      parts.functions.push(name);
      i++;
      continue;
    }
    // A metric name, with or without matchers.
    const selector: Selector = { metric: name, matchers: [] };
    i++;
    if (isPunct(at(i), "{")) {
      i++;
      while (!isPunct(at(i), "}")) {
        const label = at(i);
        const op = at(i + 1);
        const value = at(i + 2);
        if (label?.kind !== "ident" || op?.kind !== "punct" || !["=", "!=", "=~", "!~"].includes(op.text) || value?.kind !== "string") {
          throw new Error(`cannot read the matchers of ${name} in ${expr}`);
        }
        selector.matchers.push({ label: label.text, op: op.text as Matcher["op"], value: value.text });
        i += 3;
        if (isPunct(at(i), ",")) i++;
        else if (!isPunct(at(i), "}")) throw new Error(`expected , or } in the matchers of ${name} in ${expr}`);
      }
      i++;
    }
    parts.selectors.push(selector);
  }
  return parts;
}

/** The literal values a matcher can match: itself for = and !=, the alternatives of a regex made only of words and |. */
export function literalValues(m: Matcher): string[] | null {
  if (m.value.includes("$")) return null;
  if (m.op === "=" || m.op === "!=") return [m.value];
  return /^[A-Za-z0-9_:.+-]+(\|[A-Za-z0-9_:.+-]+)*$/.test(m.value) ? m.value.split("|") : null;
}
