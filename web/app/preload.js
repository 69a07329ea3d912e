// The page's first module: starts fetching the screen of the address the page opened at, in
// parallel with main.js and its imports, instead of after them.
import { parse } from './routes.js';
import { isScreen, loadScreen } from './screens.js';

const name = parse(location.pathname).name;
if (isScreen(name)) loadScreen(name).catch(() => {});
