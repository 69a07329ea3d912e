// `html` tagged templates (htm bound to Preact's `h`): JSX without a build step.
import { h } from 'preact';
import htm from 'htm';

export const html = htm.bind(h);
