/** Inline SVG icons (stroke-based, 24px grid), decorative: callers label the control. */
import type { JSX } from "preact";

function Icon(props: { d: string | string[]; size?: number; class?: string }): JSX.Element {
  const paths = Array.isArray(props.d) ? props.d : [props.d];
  return (
    <svg
      class={props.class ?? "icon"}
      width={props.size ?? 18}
      height={props.size ?? 18}
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      stroke-width="2"
      stroke-linecap="round"
      stroke-linejoin="round"
      aria-hidden="true"
      focusable="false"
    >
      {paths.map((d) => (
        <path d={d} key={d} />
      ))}
    </svg>
  );
}

export const WrenchIcon = () => (
  <Icon d="M14.7 6.3a1 1 0 0 0 0 1.4l1.6 1.6a1 1 0 0 0 1.4 0l3.77-3.77a6 6 0 0 1-7.94 7.94l-6.91 6.91a2.12 2.12 0 0 1-3-3l6.91-6.91a6 6 0 0 1 7.94-7.94l-3.76 3.76z" />
);
export const ChevronIcon = () => <Icon d="m6 9 6 6 6-6" size={16} />;
export const SendIcon = () => <Icon d={["M22 2 11 13", "M22 2 15 22l-4-9-9-4 20-7z"]} />;
export const StopIcon = () => (
  <svg class="icon" width="16" height="16" viewBox="0 0 24 24" aria-hidden="true" focusable="false">
    <rect x="5" y="5" width="14" height="14" rx="2" fill="currentColor" />
  </svg>
);
export const PlusIcon = () => <Icon d={["M12 5v14", "M5 12h14"]} />;
export const MenuIcon = () => <Icon d={["M3 6h18", "M3 12h18", "M3 18h18"]} />;
export const PencilIcon = () => <Icon d={["M12 20h9", "M16.5 3.5a2.12 2.12 0 0 1 3 3L7 19l-4 1 1-4Z"]} size={15} />;
export const TrashIcon = () => (
  <Icon d={["M3 6h18", "M19 6v14a2 2 0 0 1-2 2H7a2 2 0 0 1-2-2V6", "M8 6V4a2 2 0 0 1 2-2h4a2 2 0 0 1 2 2v2"]} size={15} />
);
export const AlertIcon = () => (
  <Icon d={["M10.29 3.86 1.82 18a2 2 0 0 0 1.71 3h16.94a2 2 0 0 0 1.71-3L13.71 3.86a2 2 0 0 0-3.42 0z", "M12 9v4", "M12 17h.01"]} />
);
export const BugIcon = () => (
  <Icon d={["M8 2l1.88 1.88", "M14.12 3.88 16 2", "M9 7.13v-1a3 3 0 1 1 6 0v1", "M12 20c-3.3 0-6-2.7-6-6v-3a4 4 0 0 1 4-4h4a4 4 0 0 1 4 4v3c0 3.3-2.7 6-6 6", "M12 20v-9", "M6.53 9C4.6 8.8 3 7.1 3 5", "M6 13H2", "M3 21c0-2.1 1.7-3.9 3.8-4", "M20.97 5c0 2.1-1.6 3.8-3.5 4", "M22 13h-4", "M17.2 17c2.1.1 3.8 1.9 3.8 4"]} size={15} />
);
export const SparkIcon = () => (
  <Icon d={["M12 3l1.9 5.8L20 10l-6.1 1.2L12 17l-1.9-5.8L4 10l6.1-1.2z"]} size={28} />
);
export const RefreshIcon = () => (
  <Icon d={["M21 12a9 9 0 1 1-2.64-6.36", "M21 3v6h-6"]} size={14} />
);
export const XIcon = () => <Icon d={["M18 6 6 18", "M6 6l12 12"]} />;
export const ChatIcon = () => (
  <Icon d="M21 15a2 2 0 0 1-2 2H7l-4 4V5a2 2 0 0 1 2-2h14a2 2 0 0 1 2 2z" size={22} />
);
export const PaperclipIcon = () => (
  <Icon d="m21.44 11.05-9.19 9.19a6 6 0 0 1-8.49-8.49l8.57-8.57A4 4 0 1 1 18 8.84l-8.59 8.57a2 2 0 0 1-2.83-2.83l8.49-8.48" />
);
export const FileIcon = () => (
  <Icon d={["M14 2H6a2 2 0 0 0-2 2v16a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2V8z", "M14 2v6h6"]} size={16} />
);
