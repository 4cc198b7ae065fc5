/**
 * Where the user is and what they picked, for servers that declare pages or context fields:
 * a page, tab and subtab picker, and a control per context field (a select for choices, a
 * switch for booleans). The values go into every message's `context`; a change applies to the
 * next message. Renders nothing when the server declares neither.
 */
import type { ClientConfig, ContextFieldView, Location } from "../lib/config";
import { validLocation } from "../lib/config";

export function ContextBar(props: {
  config: ClientConfig;
  location: Location;
  values: Record<string, string | boolean>;
  onLocation(location: Location): void;
  onValue(key: string, value: string | boolean): void;
}) {
  const { config, values } = props;
  if (config.pages.length === 0 && config.context_fields.length === 0) return null;
  const where = validLocation(config, props.location);
  const page = config.pages.find((p) => p.name === where.page);
  const tab = page?.tabs?.find((t) => t.name === where.tab);
  return (
    <div class="context-bar" role="group" aria-label="Where you are" data-testid="context-bar">
      {config.pages.length > 0 && (
        <Picker
          id="context-page"
          label="Page"
          value={where.page}
          options={config.pages}
          none="No page"
          onChange={(name) => props.onLocation({ page: name, tab: null, subtab: null })}
        />
      )}
      {page?.tabs?.length ? (
        <Picker
          id="context-tab"
          label="Tab"
          value={where.tab}
          options={page.tabs}
          none="No tab"
          onChange={(name) => props.onLocation({ page: where.page, tab: name, subtab: null })}
        />
      ) : null}
      {tab?.subtabs?.length ? (
        <Picker
          id="context-subtab"
          label="Subtab"
          value={where.subtab}
          options={tab.subtabs}
          none="No subtab"
          onChange={(name) => props.onLocation({ ...where, subtab: name })}
        />
      ) : null}
      {config.context_fields.map((field) => (
        <FieldControl key={field.key} field={field} value={values[field.key] ?? field.default} onChange={props.onValue} />
      ))}
    </div>
  );
}

function Picker(props: {
  id: string;
  label: string;
  value: string | null;
  options: { name: string; title: string }[];
  none: string;
  onChange(name: string | null): void;
}) {
  return (
    <label class="context-control" for={props.id}>
      <span class="context-label">{props.label}</span>
      <select
        id={props.id}
        value={props.value ?? ""}
        onChange={(e) => props.onChange((e.target as HTMLSelectElement).value || null)}
      >
        <option value="">{props.none}</option>
        {props.options.map((o) => (
          <option value={o.name} key={o.name}>
            {o.title}
          </option>
        ))}
      </select>
    </label>
  );
}

function FieldControl(props: {
  field: ContextFieldView;
  value: string | boolean;
  onChange(key: string, value: string | boolean): void;
}) {
  const { field } = props;
  const id = `context-field-${field.key}`;
  if (field.kind === "switch") {
    return (
      <label class="context-control context-switch" for={id} title={field.description}>
        <input
          id={id}
          type="checkbox"
          role="switch"
          checked={props.value === true}
          onChange={(e) => props.onChange(field.key, (e.target as HTMLInputElement).checked)}
        />
        <span class="context-label">{field.label}</span>
      </label>
    );
  }
  return (
    <label class="context-control" for={id} title={field.description}>
      <span class="context-label">{field.label}</span>
      <select
        id={id}
        value={String(props.value)}
        onChange={(e) => props.onChange(field.key, (e.target as HTMLSelectElement).value)}
      >
        {field.choices!.map((choice) => (
          <option value={choice} key={choice}>
            {choice}
          </option>
        ))}
      </select>
    </label>
  );
}
