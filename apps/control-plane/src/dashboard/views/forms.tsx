import { ADMIN_STATES, PROTOCOLS, TIERS } from "@linewatch/core";
import type { Child, FC } from "hono/jsx";
import { DEFAULT_SAMPLE_REQUEST, type FormErrors, type FormValues, ROUTE_ROWS } from "../forms";

export interface FormState {
  values: FormValues;
  errors: FormErrors;
}

/** A form's state and which form it is: both forms share a page, so their controls' ids carry it. */
interface ScopedState extends FormState {
  form: "line" | "sample";
}

const controlId = (state: ScopedState, name: string) => `f-${state.form}-${name}`;

const Err: FC<{ errors: FormErrors; name: string }> = ({ errors, name }) =>
  errors[name] ? (
    <span class="field-error" id={`err-${name}`} role="alert">
      {errors[name]}
    </span>
  ) : null;

/** A labelled control: `children` is the one control, whose id is controlId(state, name). */
const Field: FC<{ label: string; name: string; state: ScopedState; hint?: string; children?: Child }> = ({
  label,
  name,
  state,
  hint,
  children,
}) => (
  <label class={state.errors[name] ? "field has-error" : "field"} for={controlId(state, name)}>
    <span class="label">{label}</span>
    {children}
    {hint ? <span class="hint">{hint}</span> : null}
    <Err errors={state.errors} name={name} />
  </label>
);

const Input: FC<{
  name: string;
  state: ScopedState;
  type?: string;
  placeholder?: string;
  required?: boolean;
  step?: string;
  autocomplete?: string;
}> = ({ name, state, ...rest }) => (
  <input
    name={name}
    id={controlId(state, name)}
    value={rest.type === "password" ? "" : (state.values[name] ?? "")}
    aria-invalid={state.errors[name] ? "true" : undefined}
    {...rest}
  />
);

const Select: FC<{ name: string; state: ScopedState; options: readonly string[]; blank?: string }> = ({ name, state, options, blank }) => (
  <select name={name} id={controlId(state, name)} aria-invalid={state.errors[name] ? "true" : undefined}>
    {blank !== undefined ? <option value="">{blank}</option> : null}
    {options.map((o) => (
      <option value={o} selected={state.values[name] === o}>
        {o}
      </option>
    ))}
  </select>
);

const FormError: FC<{ errors: FormErrors }> = ({ errors }) => {
  const count = Object.keys(errors).length;
  if (count === 0) return null;
  return (
    <div class="form-error" role="alert">
      {errors[""] ?? `Nothing was saved: ${count === 1 ? "one field needs" : `${count} fields need`} a fix.`}
    </div>
  );
};

/** Register a line (POST /v1/lines through the same schema and checks). */
export const LineForm: FC<{ state: FormState; routes: string[]; open: boolean }> = ({ state: given, routes, open }) => {
  const state: ScopedState = { ...given, form: "line" };
  return (
    <details class="form-card" id="add-line" open={open}>
      <summary>Register a line</summary>
      <form method="post" action="/dashboard/lines#add-line" novalidate>
        <FormError errors={state.errors} />
        <div class="grid2">
          <Field label="name" name="name" state={state} hint="unique; letters, digits, . _ : -">
            <Input name="name" state={state} placeholder="free-c" required />
          </Field>
          <Field label="tier" name="tier" state={state}>
            <Select name="tier" state={state} options={TIERS} />
          </Field>
          <Field label="protocol" name="protocol" state={state}>
            <Select name="protocol" state={state} options={PROTOCOLS} />
          </Field>
          <Field label="model" name="model" state={state}>
            <Input name="model" state={state} placeholder="gpt-4o-mini" required />
          </Field>
          <Field label="base URL" name="baseUrl" state={state} hint="the upstream's API root, e.g. https://api.example.com/v1">
            <Input name="baseUrl" state={state} type="url" placeholder="https://…/v1" required />
          </Field>
          <Field label="API key" name="apiKey" state={state} hint="optional; stored encrypted, never shown again">
            <Input name="apiKey" state={state} type="password" autocomplete="off" />
          </Field>
        </div>
        <fieldset class="routes">
          <legend>routes and base weights</legend>
          {Array.from({ length: ROUTE_ROWS }, (_, i) => (
            <div class="route-row">
              <Field label={i === 0 ? "route" : ""} name={`route.${i}`} state={state}>
                <Select
                  name={`route.${i}`}
                  state={state}
                  options={routes}
                  blank={routes.length ? "—" : "no route yet: create one with POST /v1/routes"}
                />
              </Field>
              <Field label={i === 0 ? "base weight" : ""} name={`weight.${i}`} state={state}>
                <Input name={`weight.${i}`} state={state} type="number" placeholder="100" />
              </Field>
            </div>
          ))}
        </fieldset>
        <details
          class="advanced"
          open={["probeIntervalSec", "timeoutMs", "dailyQuota", "probeBudgetPct", "maxShare", "adminState"].some((k) => state.errors[k])}
        >
          <summary>probing and limits</summary>
          <div class="grid3">
            <Field label="probe interval (s)" name="probeIntervalSec" state={state} hint="default 45">
              <Input name="probeIntervalSec" state={state} type="number" />
            </Field>
            <Field label="timeout (ms)" name="timeoutMs" state={state} hint="default: the sample's">
              <Input name="timeoutMs" state={state} type="number" />
            </Field>
            <Field label="daily quota" name="dailyQuota" state={state} hint="requests/day upstream allows">
              <Input name="dailyQuota" state={state} type="number" />
            </Field>
            <Field label="probe budget (%)" name="probeBudgetPct" state={state} hint="of the quota; default 5">
              <Input name="probeBudgetPct" state={state} type="number" step="any" />
            </Field>
            <Field label="max share" name="maxShare" state={state} hint="0–1 of a route">
              <Input name="maxShare" state={state} type="number" step="any" />
            </Field>
            <Field label="admin state" name="adminState" state={state}>
              <Select name="adminState" state={state} options={ADMIN_STATES} />
            </Field>
          </div>
        </details>
        <div class="actions">
          <button type="submit" class="primary">
            Register line
          </button>
        </div>
      </form>
    </details>
  );
};

/** Add a golden sample (POST /v1/samples through the same schema). */
export const SampleForm: FC<{ state: FormState; open: boolean }> = ({ state: given, open }) => {
  const state: ScopedState = { ...given, form: "sample" };
  return (
    <details class="form-card" id="add-sample" open={open}>
      <summary>Add a sample</summary>
      <form method="post" action="/dashboard/samples#add-sample" novalidate>
        <FormError errors={state.errors} />
        <div class="grid2">
          <Field label="name" name="name" state={state}>
            <Input name="name" state={state} placeholder="capital-check" required />
          </Field>
          <Field label="protocol" name="protocol" state={state}>
            <Select name="protocol" state={state} options={PROTOCOLS} />
          </Field>
          <Field label="routes" name="routes" state={state} hint="comma-separated; empty = every route of the protocol">
            <Input name="routes" state={state} placeholder="chat-default" />
          </Field>
          <Field label="weight" name="weight" state={state} hint="in the line score; default 1">
            <Input name="weight" state={state} type="number" step="any" />
          </Field>
        </div>
        <Field label="request (JSON, without model)" name="request" state={state} hint="strings may hold {{nonce}} and {{now}}">
          <textarea
            name="request"
            id={controlId(state, "request")}
            rows={5}
            spellcheck={false}
            aria-invalid={state.errors.request ? "true" : undefined}
          >
            {state.values.request ?? DEFAULT_SAMPLE_REQUEST}
          </textarea>
        </Field>
        <fieldset>
          <legend>what a good answer looks like</legend>
          <div class="grid3">
            <Field label="min length" name="expect.minLength" state={state}>
              <Input name="expect.minLength" state={state} type="number" />
            </Field>
            <Field label="max length" name="expect.maxLength" state={state}>
              <Input name="expect.maxLength" state={state} type="number" />
            </Field>
            <Field label="max latency (ms)" name="expect.maxLatencyMs" state={state}>
              <Input name="expect.maxLatencyMs" state={state} type="number" />
            </Field>
            <Field
              label="required fields"
              name="expect.requiredFields"
              state={state}
              hint="comma-separated; content.x = inside the answer's JSON"
            >
              <Input name="expect.requiredFields" state={state} placeholder="content.city, usage.total_tokens" />
            </Field>
            <Field label="contains" name="expect.contains" state={state} hint="comma-separated strings">
              <Input name="expect.contains" state={state} />
            </Field>
            <Field label="matches (regex)" name="expect.matches" state={state}>
              <Input name="expect.matches" state={state} />
            </Field>
            <Field label="answer" name="expect.answer" state={state} hint="expected normalized answer">
              <Input name="expect.answer" state={state} />
            </Field>
            <label class="check">
              <input type="checkbox" name="expect.nonce" checked={state.values["expect.nonce"] === "on"} /> echoes the nonce
            </label>
            <label class="check">
              <input type="checkbox" name="expect.varies" checked={state.values["expect.varies"] === "on"} /> varies between probes
            </label>
          </div>
          <Err errors={state.errors} name="expect" />
        </fieldset>
        <Field label="timeout (ms)" name="timeoutMs" state={state}>
          <Input name="timeoutMs" state={state} type="number" />
        </Field>
        <div class="actions">
          <button type="submit" class="primary">
            Add sample
          </button>
        </div>
      </form>
    </details>
  );
};

export const emptyForm = (): FormState => ({ values: {}, errors: {} });
